"""The AMNIST privatizer (docs/mechanisms.md#privatizer) as a Ray Tune trainable: a stochastic U-Net Q = U(X, Z) trained with the seed's
squared privatizer loss against learned (or frozen) estimators. U = digit, S = thickness.

Estimators: P_η(s|q) (thickness from the release), P_ψ(u|q) (digit from the release), P_φ(u|x) (the provider's digit
classifier on raw images). ``algorithm`` picks the seed's variant:
  1: η, ψ and φ are all trained (cross-entropy, ``estimator_steps`` fresh batches before each privatizer step);
  2: φ is pre-trained on raw images and frozen, and the provider also reads the release with it: P(u|q) := P_φ(u|q);
  3: φ and the raw-data thickness classifier η are both frozen and applied to q; only the U-Net trains.
Each privatizer step minimises (1−α)·[mean log P_φ(u|x)/P(u|q)]² + α·[mean log P_η(s|q)/P(s)]². The game loop,
checkpoints, deep attacker and farm inputs follow the releaser's, so the two mechanisms' fronts compare.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from attacks.deep import DeepAttacker
from attacks.reference import reference_cache_dir
from attacks.tuning import AttackBudget
from core.data import AmnistSplit
from trainables.figures import digit_thickness, save_release_grid
from core.nets import SmallCNN, StochasticUNet
from trainables.privatizer_config import PrivatizerConfig
from trainables.privatizer_gmm import privatizer_loss
from trainables.release_map import ReleaseMap
from trainables.releaser import (FIGURE_FILE, STATE_FILE, EpochOutcome, amnist_reference, baselines_for, counts_for,
                                 load_checkpoint, load_data, load_population, pick_device, release)
from core.training import batches, evaluate, fit_classifier, predict_logits
from trainables.tune_loop import report_game, timed_epochs


@dataclass
class PrivatizerModels:
    """The U-Net, the three estimators, and the optimisers of what this algorithm trains."""

    unet: StochasticUNet
    eta: SmallCNN
    psi: SmallCNN
    phi: SmallCNN
    opt_q: torch.optim.Optimizer
    opt_est: torch.optim.Optimizer | None
    algorithm: int

    @classmethod
    def build(cls, cfg: PrivatizerConfig, device: torch.device) -> "PrivatizerModels":
        """Fresh networks on ``device``, seeded by the config; the estimators' optimiser holds only the learned ones."""
        torch.manual_seed(cfg.seed)
        unet = StochasticUNet(cfg.width, cfg.noise_channels).to(device)
        eta, psi, phi = SmallCNN(2, cfg.width).to(device), SmallCNN(10, cfg.width).to(device), SmallCNN(10, cfg.width).to(device)
        learned = {1: [eta, psi, phi], 2: [eta], 3: []}[cfg.algorithm]
        params = [p for net in learned for p in net.parameters()]
        return cls(unet, eta, psi, phi, torch.optim.Adam(unet.parameters(), lr=cfg.lr),
                   torch.optim.Adam(params, lr=cfg.lr) if params else None, cfg.algorithm)

    @property
    def utility_on_release(self) -> SmallCNN:
        """P(u|q): ψ when learned (Algorithm 1), else the provider's frozen raw-data classifier φ."""
        return self.psi if self.algorithm == 1 else self.phi

    def frozen(self) -> dict[str, nn.Module]:
        """The estimators this algorithm keeps fixed, by name: none (1), φ (2), φ and η (3)."""
        return {1: {}, 2: {"phi": self.phi}, 3: {"phi": self.phi, "eta": self.eta}}[self.algorithm]

    def freeze(self) -> None:
        """Fix the pre-trained estimators of Algorithms 2 and 3."""
        for net in self.frozen().values():
            net.requires_grad_(False)

    def state(self) -> dict:
        """Everything needed to resume training."""
        nets = {name: getattr(self, name).state_dict() for name in ("unet", "eta", "psi", "phi", "opt_q")}
        return nets | ({"opt_est": self.opt_est.state_dict()} if self.opt_est is not None else {})

    def load(self, state: dict) -> None:
        """Restore from :meth:`state` (and re-freeze the fixed estimators)."""
        for name, value in state.items():
            getattr(self, name).load_state_dict(value)
        self.freeze()


def _picked(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Log-probability of each sample's label."""
    return logits.log_softmax(1).gather(1, labels[:, None]).squeeze(1)


def loss_terms(m: PrivatizerModels, x: torch.Tensor, q: torch.Tensor, u: torch.Tensor, s: torch.Tensor,
               log_prior: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(log P_φ(u|x) detached, log P(u|q), log P_η(s|q), log P(s)) per sample: the privatizer loss's inputs."""
    with torch.no_grad():
        log_p_u_x = _picked(m.phi(x), u)
    return log_p_u_x, _picked(m.utility_on_release(q), u), _picked(m.eta(q), s), log_prior[s]


def train_epoch(cfg: PrivatizerConfig, m: PrivatizerModels, train: AmnistSplit, log_prior: torch.Tensor,
                gen: torch.Generator) -> dict[str, float]:
    """One pass over the training split: estimator steps on fresh batches, then one privatizer step per batch."""
    n, device = len(train), train.x.device
    sums = {"loss_privatizer": 0.0, "loss_estimators": 0.0, "utility_term": 0.0, "secret_term": 0.0}
    steps = 0
    for idx in batches(n, cfg.batch_size, gen, device):
        for _ in range(cfg.estimator_steps if m.opt_est is not None else 0):
            est_idx = torch.randint(n, (cfg.batch_size,), generator=gen, device=gen.device).to(device)
            x_e, u_e, s_e = train.x[est_idx], train.digit[est_idx], train.thick[est_idx]
            with torch.no_grad():
                q_e = m.unet(x_e, gen)
            ce = F.cross_entropy(m.eta(q_e), s_e)
            if m.algorithm == 1:
                ce = ce + F.cross_entropy(m.psi(q_e), u_e) + F.cross_entropy(m.phi(x_e), u_e)
            m.opt_est.zero_grad(set_to_none=True)
            ce.backward()
            m.opt_est.step()
            sums["loss_estimators"] += ce.item() / cfg.estimator_steps

        x, u, s = train.x[idx], train.digit[idx], train.thick[idx]
        log_p_u_x, log_p_u_q, log_p_s_q, log_p_s = loss_terms(m, x, m.unet(x, gen), u, s, log_prior)
        loss = privatizer_loss(log_p_u_x, log_p_u_q, log_p_s_q, log_p_s, cfg.alpha)
        m.opt_q.zero_grad(set_to_none=True)
        loss.backward()
        m.opt_q.step()
        steps += 1
        sums["loss_privatizer"] += loss.item()
        sums["utility_term"] += (log_p_u_x - log_p_u_q).mean().item()
        sums["secret_term"] += (log_p_s_q - log_p_s).mean().item()
    return {f"train/{k}": v / steps for k, v in sums.items()}


def pretrain(cfg: PrivatizerConfig, m: PrivatizerModels, train: AmnistSplit, gen: torch.Generator) -> None:
    """The U-Net as an autoencoder (BCE, as the releaser's) and every estimator on raw images; then freeze per algorithm.

    The frozen estimators of Algorithms 2 and 3 are exactly these raw-data classifiers.
    """
    for _ in range(cfg.pretrain_epochs):
        for idx in batches(len(train), cfg.batch_size, gen, train.x.device):
            loss = F.binary_cross_entropy(m.unet(train.x[idx], gen), train.x[idx])
            m.opt_q.zero_grad(set_to_none=True)
            loss.backward()
            m.opt_q.step()
    common = dict(epochs=max(cfg.pretrain_epochs, 1), batch_size=cfg.batch_size, lr=cfg.lr, generator=gen)
    fit_classifier(m.phi, train.x, train.digit, **common)
    fit_classifier(m.eta, train.x, train.thick, **common)
    if m.algorithm == 1:
        fit_classifier(m.psi, train.x, train.digit, **common)
    m.freeze()


def evaluate_release(cfg: PrivatizerConfig, m: PrivatizerModels, train: AmnistSplit, test: AmnistSplit,
                     log_prior: torch.Tensor, gen: torch.Generator, attack: bool = True) -> tuple[dict[str, float], torch.Tensor]:
    """Utility (P(u|q) and the provider's φ on the release), the in-game η, both loss terms, and a fresh deep attacker."""
    released_test = release(m.unet, test.x, gen)
    log_u_x = _picked(predict_logits(m.phi, test.x), test.digit)
    log_u_q = _picked(predict_logits(m.utility_on_release, released_test), test.digit)
    log_s_q = _picked(predict_logits(m.eta, released_test), test.thick)
    metrics = {
        "utility/accuracy": evaluate(m.utility_on_release, released_test, test.digit, 10),
        "utility/provider_accuracy": evaluate(m.phi, released_test, test.digit, 10),
        "utility/mse": F.mse_loss(released_test, test.x).item(),
        "train/adversary_accuracy": evaluate(m.eta, released_test, test.thick, 2),
        "leakage/utility_term": (log_u_x - log_u_q).mean().item(),
        "leakage/secret_term": (log_s_q - log_prior[test.thick]).mean().item(),
    }
    if attack:
        t0 = time.perf_counter()
        released_train = release(m.unet, train.x, gen)
        result = DeepAttacker(AttackBudget.from_config(cfg.as_dict())).run(
            AttackInput(released_train, train.thick, released_test, test.thick, num_classes=2))
        metrics.update(result.logged())
        metrics["time/attack_s"] = time.perf_counter() - t0
    return metrics, released_test


def run_game(cfg: PrivatizerConfig, device: torch.device,
             restore: Callable[[PrivatizerModels], int] | None = None) -> Iterator[EpochOutcome]:
    """The privatizer game epoch by epoch, from pre-trained players or a restored checkpoint."""
    t0 = time.perf_counter()
    train, test = load_data(cfg, device)
    log_prior = (torch.bincount(train.thick, minlength=2).float() / len(train)).log()
    models = PrivatizerModels.build(cfg, device)
    gen = torch.Generator(device=device).manual_seed(cfg.seed)
    if restore is None:
        start = 0
        pretrain(cfg, models, train, gen)
    else:
        start = restore(models)
        gen.manual_seed(cfg.seed + start)
    setup = time.perf_counter() - t0
    for epoch, checkpoint, metrics, released_test in timed_epochs(
            start, cfg.epochs, cfg.checkpoint_every, setup,
            lambda: train_epoch(cfg, models, train, log_prior, gen),
            lambda attack: evaluate_release(cfg, models, train, test, log_prior, gen, attack=attack)):
        yield EpochOutcome(epoch, checkpoint, metrics, models, test, released_test)


def write_checkpoint(cfg: PrivatizerConfig, outcome: EpochOutcome, directory: Path) -> None:
    """Everything needed to resume, plus the original-vs-released figure, into ``directory``."""
    torch.save({"models": outcome.models.state(), "epoch": outcome.epoch, "config": cfg.as_dict()}, directory / STATE_FILE)
    k = cfg.samples_in_figure
    save_release_grid(outcome.test.x[:k], outcome.released_test[:k], directory / FIGURE_FILE,
                      f"privatizer α={cfg.alpha:g} algorithm {cfg.algorithm} epoch {outcome.epoch}",
                      digit_thickness(outcome.test.digit[:k], outcome.test.thick[:k]))


def train_privatizer(config: dict) -> None:
    """Ray Tune function trainable: reports metrics every epoch and checkpoints, resumes from the last checkpoint."""
    cfg = PrivatizerConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    report_game(lambda restore: run_game(cfg, pick_device(), restore), load_checkpoint,
                lambda outcome, directory: write_checkpoint(cfg, outcome, directory))


def _restored(config: dict, checkpoint_dir: str, device: torch.device) -> tuple[PrivatizerConfig, PrivatizerModels, int]:
    """Typed config, models loaded from ``checkpoint_dir`` onto ``device``, and the checkpoint's epoch."""
    cfg = PrivatizerConfig.from_dict(config)
    models = PrivatizerModels.build(cfg, device)
    return cfg, models, load_checkpoint(checkpoint_dir, models)


def checkpoint_inputs(config: dict, checkpoint_dir: str) -> CheckpointInputs:
    """The farm's view of one checkpoint: released splits (with digits and raw inputs) and the trained estimators."""
    device = pick_device()
    cfg, models, epoch = _restored(config, checkpoint_dir, device)
    torch.set_num_threads(cfg.threads)
    train, test = load_data(cfg, device)
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 1000 + epoch)
    released_train, released_test = release(models.unet, train.x, gen), release(models.unet, test.x, gen)
    data = AttackInput(released_train, train.thick, released_test, test.thick, num_classes=2,
                       train_u=train.digit, test_u=test.digit, raw_train_x=train.x)
    population = load_population(cfg, device)
    pop_gen = torch.Generator(device=device).manual_seed(cfg.seed + 2000 + epoch)
    released_pop = release(models.unet, population.x, pop_gen) if len(population) else population.x
    targets = (
        MembershipTarget("utility", models.utility_on_release, released_train, train.digit, released_test, test.digit,
                         estimator_reference(cfg, "utility", epoch, population, released_pop, checkpoint_dir)),
        MembershipTarget("adversary", models.eta, released_train, train.thick, released_test, test.thick,
                         estimator_reference(cfg, "adversary", epoch, population, released_pop, checkpoint_dir)),
    )
    return CheckpointInputs(data, targets)


def estimator_reference(cfg: PrivatizerConfig, role: str, epoch: int, population: AmnistSplit, released_pop: torch.Tensor,
                        checkpoint_dir: str) -> ReferenceData | None:
    """Reference data for the utility estimator or the adversary η, trained the way this algorithm trains it.

    A frozen estimator (φ in Algorithms 2 and 3, η in Algorithm 3) is a raw-image classifier: its references train
    on the raw population (shared by every checkpoint) and are queried on its release. A learned one starts on raw
    images and then trains on the release: its references train on the released population (per checkpoint).
    """
    classes, labels = (10, population.digit) if role == "utility" else (2, population.thick)
    frozen = (role == "utility" and cfg.algorithm != 1) or (role == "adversary" and cfg.algorithm == 3)
    pretrain = max(cfg.pretrain_epochs, 1)
    if frozen:
        return amnist_reference(SmallCNN, classes, cfg.width, pretrain, cfg, population.x, labels, released_pop,
                                reference_cache_dir(checkpoint_dir, per_checkpoint=False))
    return amnist_reference(SmallCNN, classes, cfg.width, pretrain + epoch * cfg.estimator_steps, cfg, released_pop, labels,
                            None, reference_cache_dir(checkpoint_dir, per_checkpoint=True))


def load_release(config: dict, checkpoint_dir: str) -> ReleaseMap:
    """The checkpoint's U-Net as a served map: 1×28×28 images in [0, 1] to privatized images."""
    _, models, _ = _restored(config, checkpoint_dir, torch.device("cpu"))
    return ReleaseMap("privatizer", (1, 28, 28), (0.0, 1.0), models.unet.eval(), release)


def raw_baselines(config: dict) -> dict[str, float]:
    """Digit and thickness accuracy of fresh classifiers on raw images (the same reference as the releaser's)."""
    return baselines_for(PrivatizerConfig.from_dict(config))


def data_counts(config: dict) -> dict[str, int]:
    """Image counts of the data a trial with this config uses (fails early if there is no data)."""
    return counts_for(PrivatizerConfig.from_dict(config))

