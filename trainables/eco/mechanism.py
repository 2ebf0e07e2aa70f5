"""The α-MI releaser on ECO smart-meter windows as a Mechanism (docs/mechanisms.md#on-eco-smart-meter-days-eco-eco-si,
Algorithm 1).

Sequences are windows of ``window_hours`` consecutive hours every ``window_stride_hours`` hours (the paper's
count: 24 h every 2 h), cut inside the train or the test days, so no window spans both. Private S = the
occupancy of every hour of a window, utility = the consumption itself. Each iteration trains the LSTM
adversary k times on the current release, then the LSTM releaser once on
L_R = NE(X, Y) + λ·Σ_h Î_α(S_h;Y)/Σ_h H_α(S_h), the α-MI of the occupancy at hour of day h against that
hour's prior, from the adversary's per-step posteriors (the hour itself is public). With ``side_info`` the
adversary (and every deep attacker) reads [Y ; SI]; with ``releaser_si`` the releaser reads [X ; SI ; Z].
Checkpoint epochs add a fresh deep attacker, a checkpoint and a 7-day original-vs-released trace.
Consumption is released in normalised units (training mean and std).
"""
from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from torch.nn import functional as F

from attacks.attackers.deep import DeepAttacker
from attacks.attackers.side_info import SideInfoAttacker, SiOnlyAttacker, plug_in_bayes
from attacks.attackers.tuning import accuracy_metrics, tuned_result
from attacks.audits.imputation import ImputationAttacker
from attacks.base import AttackInput, AttackResult, CheckpointInputs
from core.data import get_dataset
from core.data.eco_files import EPOCH, HOURS, SI_FEATURES, EcoWindows, window_days
from core.data.sets.eco import EcoRecords, eco_records
from core.metrics import balanced_accuracy
from core.training import batches, fit_classifier, predict_logits
from trainables.eco.config import EcoConfig
from trainables.eco.nets import LstmClassifier, LstmReleaser
from trainables.shared.alpha_mi import alpha_mutual_information, renyi_entropy
from trainables.shared.mechanism import Mechanism, pick_device
from trainables.shared.release_map import ReleaseMap, release

FIGURE_FILE = "trace_7days.png"


@dataclass(frozen=True)
class EcoSplit:
    """One split's windows on the trial's device: normalised consumption [N, L, 1], watts [N, L], occupancy [N, L],
    hour of day [N, L], SI [N, 19]."""

    x: torch.Tensor
    watts: torch.Tensor
    occupancy: torch.Tensor
    hour: torch.Tensor
    si: torch.Tensor
    windows: EcoWindows  # the calendar of these rows (CPU), for the figure

    def __len__(self) -> int:
        return len(self.x)


def load_records(cfg: EcoConfig) -> EcoRecords:
    """The config's data set from the registry (the real ECO files under ``data_root``, or the synthetic generator when
    it is empty): its days split by (household, week) blocks, then windowed within each side."""
    splits = get_dataset(cfg.dataset).load(
        cfg.data_root, households=cfg.households, days=cfg.days, data_seed=cfg.data_seed, test_fraction=cfg.test_fraction,
        max_missing_hours=cfg.max_missing_hours, window_hours=cfg.window_hours, window_stride_hours=cfg.window_stride_hours)
    return eco_records(splits)


def load_data(cfg: EcoConfig, device: torch.device) -> tuple[EcoSplit, EcoSplit, tuple[float, float]]:
    """Train and test windows on ``device`` and the (mean, std) in W of the training days that normalise consumption."""
    records = load_records(cfg)
    train_days = records.days.consumption[records.train_days]
    mean, std = float(train_days.mean()), float(train_days.std())

    def make(part: EcoWindows) -> EcoSplit:
        watts = part.consumption.to(device)
        return EcoSplit(((watts - mean) / std).unsqueeze(2), watts, part.occupancy.to(device), part.hour.to(device),
                        part.side_information().to(device), part)

    return make(records.train), make(records.test), (mean, std)


def with_si(x: torch.Tensor, si: torch.Tensor) -> torch.Tensor:
    """[N, L, f] sequence with the window's SI appended to every hour: [N, L, f + 19]."""
    return torch.cat([x, si.unsqueeze(1).expand(-1, x.shape[1], -1)], dim=2)


def releaser_input(cfg: EcoConfig, split: EcoSplit) -> torch.Tensor:
    """What the releaser reads per hour: normalised consumption, then SI when ``releaser_si``."""
    return with_si(split.x, split.si) if cfg.releaser_si else split.x


def adversary_input(cfg: EcoConfig, y: torch.Tensor, si: torch.Tensor) -> torch.Tensor:
    """What the adversary and deep attackers read per hour: the release, then SI when ``side_info``."""
    return with_si(y, si) if cfg.side_info else y


def ne_energy(y: torch.Tensor, x: torch.Tensor, norm: tuple[float, float]) -> torch.Tensor:
    """Σ(X − Y)² / ΣX² in watts over the whole batch, from normalised sequences (releasing all zeros scores 1)."""
    mean, std = norm
    xw, yw = x * std + mean, y * std + mean
    return ((yw - xw) ** 2).sum() / (xw ** 2).sum()


def ne_variance(y: torch.Tensor, x: torch.Tensor, norm: tuple[float, float]) -> torch.Tensor:
    """Σ(X − Y)² / Σ(X − X̄)² with X̄ the batch's mean power (releasing that constant mean scores 1)."""
    mean, std = norm
    xw, yw = x * std + mean, y * std + mean
    return ((yw - xw) ** 2).sum() / ((xw - xw.mean()) ** 2).sum()


def adversary_net(cfg: EcoConfig) -> Callable[[int, int], LstmClassifier]:
    """The adversary's architecture as a (number of classes, hidden width) factory (the deep attacker tunes the width)."""
    return partial(lstm_classifier, 1 + SI_FEATURES * cfg.side_info, cfg.adversary_layers, cfg.window_hours)


def lstm_classifier(features: int, layers: int, steps: int, num_classes: int, hidden: int) -> LstmClassifier:
    """A fresh per-step LSTM classifier (module-level, so factories built from it pickle to Ray workers)."""
    return LstmClassifier(features, num_classes, hidden=hidden, layers=layers, steps=steps)


def hourly_prior(occupancy: torch.Tensor, hour: torch.Tensor) -> torch.Tensor:
    """P(S = s | hour of day) from labels and their hours [N, L]: [24, 2] (an hour never seen gets 1/2, 1/2)."""
    counts = torch.bincount(hour.flatten(), minlength=HOURS).double()
    occupied = torch.bincount(hour.flatten(), weights=occupancy.flatten().double(), minlength=HOURS)
    rate = torch.where(counts > 0, occupied / counts.clamp_min(1), torch.full_like(counts, 0.5)).float()
    return torch.stack([1 - rate, rate], 1)


def hourly_alpha_mi(logits: torch.Tensor, hour: torch.Tensor, prior: torch.Tensor, alpha: float) -> torch.Tensor:
    """Σ_h Î_α(S_h;Y) / Σ_h H_α(S_h) from the adversary's logits [N, 2, L], each step's hour of day [N, L] and the
    per-hour prior [24, 2].

    The hour of a label is public (a reading's timestamp), so leakage is measured against each hour's own
    prior, over all the steps at that hour: a release that reveals only the hour scores 0. Each hour's
    estimate is clamped at 0 (true α-MI is never negative): a releaser is rewarded for leaving the adversary
    uninformed, not for making it confidently wrong, which would only last until the adversary's next step.
    """
    post = logits.softmax(1).transpose(1, 2)  # [N, L, 2]
    mi, entropy = post.new_zeros(()), post.new_zeros(())
    for h in torch.unique(hour).tolist():
        mi = mi + alpha_mutual_information(post[hour == h], prior[h], alpha).clamp_min(0)
        entropy = entropy + renyi_entropy(prior[h], alpha)
    return mi / entropy.clamp_min(1e-12)


def within_hour_accuracy(pred: torch.Tensor, target: torch.Tensor, hour: torch.Tensor) -> float:
    """The mean over hours of day of the balanced accuracy among the labels at that hour (chance 1/2 at every hour,
    whatever the hour's prior)."""
    hours = torch.unique(hour).tolist()
    return sum(balanced_accuracy(pred[hour == h], target[hour == h], 2) for h in hours) / len(hours)


def position_floors(train: EcoSplit, test: EcoSplit) -> dict[str, float]:
    """Attackers that see no consumption: the plug-in Bayes rule on the step's position in its window
    (``position_only``) and on its hour of day (``hour_only``), each fitted on the training windows, pooled and within
    hours."""
    position = torch.arange(train.occupancy.shape[1], device=train.hour.device)
    metrics = {}
    for name, train_key, test_key in (("position_only", position.expand_as(train.hour), position.expand_as(test.hour)),
                                      ("hour_only", train.hour, test.hour)):
        pred = plug_in_bayes(train_key.reshape(-1, 1), train.occupancy.flatten(), test_key.reshape(-1, 1), 2)
        metrics[f"attack/{name}/accuracy"] = balanced_accuracy(pred, test.occupancy.flatten(), 2)
        metrics[f"attack/{name}/accuracy_within_hour"] = within_hour_accuracy(pred, test.occupancy.flatten(),
                                                                               test.hour.flatten())
    return metrics


def imputation_baseline(cfg: EcoConfig, raw: AttackInput, train: EcoSplit, test: EcoSplit) -> AttackResult:
    """The best attacker that sees no consumption (:mod:`attacks.audits.imputation`): occupancy from the prior, the side
    information (which the farm's SI attackers are given), the hour of day (a reading's public timestamp) and the step's
    position in its window, alone, joined with SI and fitted within each hour; pooled (``accuracy``) and within hours
    (``accuracy_within_hour``, the front's axis)."""
    position = torch.arange(train.occupancy.shape[1], device=train.hour.device)
    public = {"hour": (train.hour, test.hour),
              "position": (position.expand_as(train.hour), position.expand_as(test.hour))}

    def within_hour(pred: torch.Tensor) -> dict[str, float]:
        return {"accuracy_within_hour": within_hour_accuracy(pred.flatten(), test.occupancy.flatten(),
                                                             test.hour.flatten())}

    return ImputationAttacker(cfg).run(raw, public, within_hour, strata=("hour", train.hour, test.hour))


def train_epoch(cfg: EcoConfig, m: EcoReleaser, train: EcoSplit, prior: torch.Tensor, norm: tuple[float, float],
                gen: torch.Generator) -> dict[str, float]:
    """One pass of Algorithm 1 over the training windows; returns mean training losses."""
    n, device = len(train), train.x.device
    r_in = releaser_input(cfg, train)
    sums = {"loss_releaser": 0.0, "loss_adversary": 0.0, "ne_energy": 0.0, "privacy_term": 0.0}
    steps = 0
    for idx in batches(n, cfg.batch_size, gen, device):
        for _ in range(cfg.adv_steps):
            adv_idx = torch.randint(n, (cfg.batch_size,), generator=gen, device=gen.device).to(device)
            with torch.no_grad():
                y_adv = m.releaser(r_in[adv_idx], gen)
            loss_a = F.cross_entropy(m.adversary(adversary_input(cfg, y_adv, train.si[adv_idx])), train.occupancy[adv_idx])
            m.opt_a.zero_grad(set_to_none=True)
            loss_a.backward()
            m.opt_a.step()

        y = m.releaser(r_in[idx], gen)
        distortion = ne_energy(y, train.x[idx], norm)
        privacy = hourly_alpha_mi(m.adversary(adversary_input(cfg, y, train.si[idx])), train.hour[idx], prior, cfg.alpha)
        loss_r = distortion + cfg.lam * privacy
        m.opt_r.zero_grad(set_to_none=True)
        loss_r.backward()
        torch.nn.utils.clip_grad_norm_(m.releaser.parameters(), cfg.clip_norm)
        m.opt_r.step()

        steps += 1
        for key, value in (("loss_releaser", loss_r), ("loss_adversary", loss_a), ("ne_energy", distortion),
                           ("privacy_term", privacy)):
            sums[key] += value.item()
    return {f"train/{k}": v / steps for k, v in sums.items()}


def pretrain(cfg: EcoConfig, m: EcoReleaser, train: EcoSplit, gen: torch.Generator) -> None:
    """Warm start at the full-utility end: the releaser as an identity map (Y ≈ X), the adversary on raw windows.

    The identity is fitted fast (``pretrain_lr``, its own optimiser); the game's slower, clipped
    releaser steps (``releaser_lr``) then start from it.
    """
    r_in = releaser_input(cfg, train)
    opt = torch.optim.Adam(m.releaser.parameters(), lr=cfg.pretrain_lr)
    for _ in range(cfg.pretrain_epochs):
        for idx in batches(len(train), cfg.batch_size, gen, train.x.device):
            loss = F.mse_loss(m.releaser(r_in[idx], gen), train.x[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    if cfg.pretrain_epochs:
        fit_classifier(m.adversary, adversary_input(cfg, train.x, train.si), train.occupancy, epochs=cfg.pretrain_epochs,
                       batch_size=cfg.batch_size, lr=cfg.lr, generator=gen)


def deep_attacker(cfg: EcoConfig) -> DeepAttacker:
    """The adversary's LSTM retrained from scratch as a tuned, early-stopped family (widths hidden and 2·hidden)."""
    return DeepAttacker(cfg, model=adversary_net(cfg), width=cfg.adversary_hidden)


def deep_attack(cfg: EcoConfig, train_x: torch.Tensor, train: EcoSplit, test_x: torch.Tensor,
                test: EcoSplit) -> dict[str, float]:
    """The tuned deep attacker fitted on (train_x, train's occupancy), scored once on test_x: its pooled metrics and
    ``accuracy_within_hour``, under ``attack/deep/``."""
    attacker = deep_attacker(cfg)
    fit = attacker.fit(train_x, train.occupancy, 2)
    pred = predict_logits(fit.model, test_x).argmax(1)
    result = tuned_result(attacker.name, fit, pred, test.occupancy, 2)
    result.metrics["accuracy_within_hour"] = within_hour_accuracy(pred, test.occupancy, test.hour)
    return result.logged()


def evaluate_release(cfg: EcoConfig, m: EcoReleaser, train: EcoSplit, test: EcoSplit, prior: torch.Tensor,
                     norm: tuple[float, float], gen: torch.Generator,
                     attack: bool = True) -> tuple[dict[str, float], torch.Tensor]:
    """NE under both normalisers, the in-game adversary, the α-MI estimate and (``attack``) a fresh deep attacker on
    the released splits."""
    released_test = release(m.releaser, releaser_input(cfg, test), gen)
    adv_test = adversary_input(cfg, released_test, test.si)
    logits = predict_logits(m.adversary, adv_test)
    with torch.no_grad():
        leakage = hourly_alpha_mi(logits, test.hour, prior, cfg.alpha).item()
    in_game = accuracy_metrics(logits.argmax(1), test.occupancy, 2)
    metrics = {
        "utility/ne_energy": ne_energy(released_test, test.x, norm).item(),
        "utility/ne_variance": ne_variance(released_test, test.x, norm).item(),
        "train/adversary_accuracy": in_game["accuracy"],
        "leakage/normalised_alpha_mi": leakage,
    }
    if attack:
        t0 = time.perf_counter()
        released_train = release(m.releaser, releaser_input(cfg, train), gen)
        metrics.update(deep_attack(cfg, adversary_input(cfg, released_train, train.si), train, adv_test, test))
        metrics["time/attack_s"] = time.perf_counter() - t0
    return metrics, released_test


def figure_rows(test: EcoSplit, days: int) -> torch.Tensor:
    """Test windows that start at midnight, of the first household from its first such window on, at most ``days``
    calendar days (its first test week); with 24-hour windows they tile those days."""
    w = test.windows
    house = torch.nonzero((w.household == w.household.min()) & (w.start % HOURS == 0)).flatten()
    order = house[torch.argsort(w.start[house])]
    return order[w.start[order] < w.start[order[0]] + days * HOURS]


def save_trace_figure(test: EcoSplit, released: torch.Tensor, norm: tuple[float, float], path: Path, title: str,
                      days: int = 7) -> Path:
    """Original vs released hourly power (W) of the midnight windows over ``days`` test days, occupied hours shaded, as a
    PNG."""
    rows = figure_rows(test, days)
    mean, std = norm
    original = test.watts[rows].flatten().cpu()
    out = (released[rows].squeeze(2) * std + mean).flatten().cpu()
    occupied = test.occupancy[rows].flatten().cpu()
    fig = Figure(figsize=(11, 3.2))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    hours = torch.arange(len(original))
    ax.fill_between(hours, 0, float(max(original.max(), out.max())), where=occupied.bool(), step="post",
                    color="tab:green", alpha=0.12, label="occupied")
    ax.step(hours, original, where="post", color="black", lw=1.0, label="original")
    ax.step(hours, out, where="post", color="tab:red", lw=1.0, label="released")
    dates = [EPOCH + dt.timedelta(hours=int(h)) for h in test.windows.start[rows]]
    ax.set_xticks(range(0, len(original), test.watts.shape[1]), [d.strftime("%a %d %b") for d in dates], fontsize=7)
    ax.set_ylabel("power (W)")
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title(f"{title}, household {int(test.windows.household[rows[0]])}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


class EcoReleaser(Mechanism[EcoConfig]):
    """The LSTM releaser, the LSTM adversary and their optimisers, on the ECO windows."""

    name = "eco_releaser"
    config_class = EcoConfig
    trainable_name = "train_eco_releaser"
    figures = (FIGURE_FILE,)

    def build(self) -> None:
        """Fresh networks on the device, seeded by the config."""
        cfg, device = self.cfg, self.device
        torch.manual_seed(cfg.seed)
        self.releaser = LstmReleaser(1 + SI_FEATURES * cfg.releaser_si, cfg.noise_dim, cfg.releaser_hidden,
                                     cfg.releaser_layers).to(device)
        self.adversary = adversary_net(cfg)(2, cfg.adversary_hidden).to(device)
        self.opt_r = torch.optim.Adam(self.releaser.parameters(), lr=cfg.releaser_lr)
        self.opt_a = torch.optim.Adam(self.adversary.parameters(), lr=cfg.lr)
        self.norm = (0.0, 1.0)  # the training (mean, std) in W, set by setup or a checkpoint

    def setup(self) -> None:
        """Train and test windows on the device, the per-hour occupancy prior, fresh players, the game's generator."""
        self.train, self.test, norm = load_data(self.cfg, self.device)
        self.prior = hourly_prior(self.train.occupancy, self.train.hour).to(self.device)  # P(S = s | hour), [24, 2]
        self.build()
        self.norm = norm
        self.gen = torch.Generator(device=self.device).manual_seed(self.cfg.seed)

    def begin(self, start: int) -> None:
        """A resumed game restarts its generator at seed + epochs done."""
        if start:
            self.gen.manual_seed(self.cfg.seed + start)

    def state(self) -> dict:
        """The networks and optimisers, and the normalisation a served release needs (``normalisation``)."""
        nets = {name: getattr(self, name).state_dict() for name in ("releaser", "adversary", "opt_r", "opt_a")}
        return nets | {"normalisation": {"mean_w": self.norm[0], "std_w": self.norm[1]}}

    def load_state(self, state: dict) -> None:
        for name, value in state.items():
            if name != "normalisation":
                getattr(self, name).load_state_dict(value)

    def pretrain(self) -> None:
        pretrain(self.cfg, self, self.train, self.gen)

    def train_epoch(self) -> dict[str, float]:
        return train_epoch(self.cfg, self, self.train, self.prior, self.norm, self.gen)

    def evaluate(self, attack: bool) -> dict[str, float]:
        metrics, self.released_test = evaluate_release(self.cfg, self, self.train, self.test, self.prior, self.norm,
                                                       self.gen, attack=attack)
        return metrics

    def write_figures(self, directory: Path, epoch: int) -> None:
        """The original-vs-released trace of the first test week."""
        cfg = self.cfg
        save_trace_figure(self.test, self.released_test, self.norm, directory / FIGURE_FILE,
                          f"α={cfg.alpha} λ={cfg.lam} k={cfg.adv_steps} epoch {epoch}", cfg.figure_days)

    def farm_inputs(self) -> CheckpointInputs:
        """Released windows [N, L, 1], their occupancy [N, L], SI, raw windows."""
        cfg, train, test = self.cfg, self.train, self.test
        gen = torch.Generator(device=self.device).manual_seed(cfg.seed + 1000 + self.epoch)
        released_train = release(self.releaser, releaser_input(cfg, train), gen)
        released_test = release(self.releaser, releaser_input(cfg, test), gen)
        return CheckpointInputs(AttackInput(released_train, train.occupancy, released_test, test.occupancy,
                                            num_classes=2, raw_train_x=train.x, train_si=train.si, test_si=test.si))

    def release_map(self) -> ReleaseMap:
        """The releaser as a served map: [N, L, 1 (+19 SI if releaser_si)] normalised windows -> [N, L, 1].

        Inputs are (W − mean_w) / std_w with the training statistics saved as ``normalisation`` in state.pt,
        followed by the weekday and month one-hot columns when the releaser reads SI.
        """
        return ReleaseMap(self.name, (self.cfg.window_hours, 1 + SI_FEATURES * self.cfg.releaser_si), None,
                          self.releaser.eval(), release)

    @classmethod
    def raw_baselines(cls, config: dict) -> dict[str, float]:
        """Attackers on unreleased windows (the PUT's no-privacy end), the SI-only floor, the position and hour floors,
        and the imputation attacker (:func:`imputation_baseline`)."""
        cfg = cls.typed(config)
        torch.set_num_threads(cfg.threads)
        train, test, _ = load_data(cfg, pick_device())
        raw = AttackInput(train.x, train.occupancy, test.x, test.occupancy, num_classes=2, train_si=train.si,
                          test_si=test.si)
        metrics = deep_attack(cfg, adversary_input(cfg, train.x, train.si), train, adversary_input(cfg, test.x, test.si),
                              test) | position_floors(train, test)
        for result in (SideInfoAttacker(cfg).run(raw), SiOnlyAttacker(cfg).run(raw),
                       imputation_baseline(cfg, raw, train, test)):
            metrics.update(result.logged())
        return {f"baseline/{k}": v for k, v in metrics.items()}

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        """Days and windows per split and what the data source counted (missing hours interpolated, days dropped);
        fails early if no data."""
        cfg = cls.typed(config)
        records = load_records(cfg)
        days = records.days
        return {**days.counts, "eco_train_days": len(records.train_days), "eco_test_days": len(records.test_days),
                "eco_train_windows": len(records.train), "eco_test_windows": len(records.test),
                "eco_windows_unsplit": len(window_days(days, cfg.window_hours, cfg.window_stride_hours)),
                "occupied_hours": int(days.occupancy.sum())}
