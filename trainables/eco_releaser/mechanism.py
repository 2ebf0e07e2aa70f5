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

from pathlib import Path
from typing import ClassVar

import torch

from attacks.attackers.side_info import SideInfoAttacker, SiOnlyAttacker
from attacks.base import AttackInput, CheckpointInputs
from core.data.eco_files import SI_FEATURES, window_days
from trainables.eco_releaser.attack_runs import deep_attack, imputation_attack
from trainables.eco_releaser.config import EcoConfig
from trainables.eco_releaser.nets import LstmReleaser, adversary_net
from trainables.eco_releaser.rounds import evaluate_release, pretrain, train_epoch
from trainables.eco_releaser.scores import hourly_prior, position_floors
from trainables.eco_releaser.trace_figure import FIGURE_FILE, save_trace_figure
from trainables.eco_releaser.windows import adversary_input, load_data, load_records, releaser_input
from trainables.shared.mechanism import Capability, Mechanism, pick_device
from trainables.shared.release_map import ReleaseMap, release


class EcoReleaser(Mechanism[EcoConfig]):
    """The LSTM releaser, the LSTM adversary and their optimisers, on the ECO windows."""
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.FARM, Capability.SERVE, Capability.RAW_REFERENCE})

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
    def raw_references(cls, config: dict) -> dict[str, float]:
        """Attackers on unreleased windows (the PUT's no-privacy end), the SI-only floor, the position and hour floors,
        and the imputation attacker (:func:`imputation_attack`)."""
        cfg = cls.typed(config)
        torch.set_num_threads(cfg.threads)
        train, test, _ = load_data(cfg, pick_device())
        raw = AttackInput(train.x, train.occupancy, test.x, test.occupancy, num_classes=2, train_si=train.si,
                          test_si=test.si)
        metrics = deep_attack(cfg, adversary_input(cfg, train.x, train.si), train, adversary_input(cfg, test.x, test.si),
                              test) | position_floors(train, test)
        for result in (SideInfoAttacker(cfg).run(raw), SiOnlyAttacker(cfg).run(raw),
                       imputation_attack(cfg, raw, train, test)):
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
