"""The α-MI releaser as a Ray Tune trainable (docs/mechanisms.md#α-mi-releaser, Algorithm 1).

Each iteration trains the adversary k times on fresh batches of the current release, the utility
net once, then the releaser once on  L_R = mse_weight·MSE(X,Y) + CE(utility(Y), U) + λ·Î_α(S;Y)/H_α(S).
Every epoch ends with an evaluation, a fresh deep attacker on the released splits, and a checkpoint;
a restarted trial resumes from its last checkpoint.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch
from torch.nn import functional as F

from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from attacks.deep import DeepAttacker, RawTrainedDeepAttacker
from attacks.reference import ClassifierRecipe, reference_cache_dir
from attacks.thickness import ThicknessAttacker
from attacks.tuning import AttackBudget
from trainables.alpha_mi import leakage_alpha_mi, normalised_alpha_mi
from core.data import AmnistSplit, default_data_root, load_amnist, load_amnist_population
from trainables.figures import digit_thickness, save_release_grid
from core.nets import ConvReleaser, SmallCNN
from trainables.privatizer_config import PrivatizerConfig
from trainables.release_map import ReleaseMap
from trainables.releaser_config import ReleaserConfig
from core.training import batches, evaluate, fit_classifier
from trainables.tune_loop import report_game, timed_epochs

AmnistTrialConfig = ReleaserConfig | PrivatizerConfig  # the AMNIST mechanisms share data, baselines and counts

STATE_FILE = "state.pt"
FIGURE_FILE = "released.png"


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be read back (corrupt, truncated or from another config)."""


@dataclass
class Models:
    """The three networks of a trial and their optimisers."""

    releaser: ConvReleaser
    adversary: SmallCNN
    utility: SmallCNN
    opt_r: torch.optim.Optimizer
    opt_a: torch.optim.Optimizer
    opt_u: torch.optim.Optimizer

    @classmethod
    def build(cls, cfg: ReleaserConfig, device: torch.device) -> "Models":
        """Fresh networks on ``device``, seeded by the config."""
        torch.manual_seed(cfg.seed)
        releaser = ConvReleaser(cfg.width, cfg.noise_channels).to(device)
        adversary = SmallCNN(2, cfg.width).to(device)
        utility = SmallCNN(10, cfg.width).to(device)
        return cls(
            releaser, adversary, utility,
            torch.optim.Adam(releaser.parameters(), lr=cfg.lr),
            torch.optim.Adam(adversary.parameters(), lr=cfg.lr),
            torch.optim.Adam(utility.parameters(), lr=cfg.lr),
        )

    def state(self) -> dict:
        """Everything needed to resume training."""
        return {name: getattr(self, name).state_dict() for name in ("releaser", "adversary", "utility", "opt_r", "opt_a", "opt_u")}

    def load(self, state: dict) -> None:
        """Restore from :meth:`state`."""
        for name, value in state.items():
            getattr(self, name).load_state_dict(value)


def pick_device() -> torch.device:
    """CUDA when Ray gave this trial a GPU (or one is visible), else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load_checkpoint(directory: str, models: Models) -> int:
    """Load a trial checkpoint into ``models``; return the number of epochs already done."""
    path = Path(directory) / STATE_FILE
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
        models.load(blob["models"])
        return int(blob["epoch"])
    except Exception as exc:  # any failure to read back is the same problem for the user
        raise CheckpointError(f"cannot restore checkpoint {path}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc


def release(releaser: ConvReleaser, x: torch.Tensor, generator: torch.Generator, batch_size: int = 1024) -> torch.Tensor:
    """Y = R(X, Z) for a whole split, batched, without gradients."""
    was_training = releaser.training
    releaser.eval()
    with torch.no_grad():
        out = torch.cat([releaser(chunk, generator) for chunk in x.split(batch_size)])
    releaser.train(was_training)
    return out


def train_epoch(cfg: ReleaserConfig, m: Models, train: AmnistSplit, prior: torch.Tensor, gen: torch.Generator) -> dict[str, float]:
    """One pass of Algorithm 1 over the training split; returns mean training losses."""
    n, device = len(train), train.x.device
    sums = {"loss_releaser": 0.0, "loss_adversary": 0.0, "loss_utility": 0.0, "mse": 0.0, "privacy_term": 0.0}
    steps = 0
    for idx in batches(n, cfg.batch_size, gen, device):
        for _ in range(cfg.adv_steps):
            adv_idx = torch.randint(n, (cfg.batch_size,), generator=gen, device=gen.device).to(device)
            with torch.no_grad():
                y_adv = m.releaser(train.x[adv_idx], gen)
            loss_a = F.cross_entropy(m.adversary(y_adv), train.thick[adv_idx])
            m.opt_a.zero_grad(set_to_none=True)
            loss_a.backward()
            m.opt_a.step()

        x, u = train.x[idx], train.digit[idx]
        y = m.releaser(x, gen)
        loss_u = F.cross_entropy(m.utility(y.detach()), u)
        m.opt_u.zero_grad(set_to_none=True)
        loss_u.backward()
        m.opt_u.step()

        mse = F.mse_loss(y, x)
        privacy = normalised_alpha_mi(m.adversary(y).softmax(1), prior, cfg.alpha)
        loss_r = cfg.mse_weight * mse + cfg.utility_ce_weight * F.cross_entropy(m.utility(y), u) + cfg.lam * privacy
        m.opt_r.zero_grad(set_to_none=True)
        loss_r.backward()
        m.opt_r.step()

        steps += 1
        for key, value in (("loss_releaser", loss_r), ("loss_adversary", loss_a), ("loss_utility", loss_u), ("mse", mse), ("privacy_term", privacy)):
            sums[key] += value.item()
    return {f"train/{k}": v / steps for k, v in sums.items()}


def pretrain(cfg: ReleaserConfig, m: Models, train: AmnistSplit, gen: torch.Generator) -> None:
    """Warm start: the releaser as an autoencoder (Y ≈ X), the utility net and adversary on raw images.

    The autoencoder is fitted with pixel-wise binary cross-entropy: on sparse MNIST strokes plain MSE
    through a sigmoid collapses to an all-black image, a flat local minimum the game cannot leave.

    The game then starts from the full-utility end of the trade-off with informed players, instead
    of spending its first epochs on grey noise.
    """
    for _ in range(cfg.pretrain_epochs):
        for idx in batches(len(train), cfg.batch_size, gen, train.x.device):
            loss = F.binary_cross_entropy(m.releaser(train.x[idx], gen), train.x[idx])
            m.opt_r.zero_grad(set_to_none=True)
            loss.backward()
            m.opt_r.step()
    if cfg.pretrain_epochs:
        common = dict(epochs=cfg.pretrain_epochs, batch_size=cfg.batch_size, lr=cfg.lr, generator=gen)
        fit_classifier(m.utility, train.x, train.digit, **common)
        fit_classifier(m.adversary, train.x, train.thick, **common)


def evaluate_release(cfg: ReleaserConfig, m: Models, train: AmnistSplit, test: AmnistSplit, prior: torch.Tensor,
                     gen: torch.Generator, attack: bool = True) -> tuple[dict[str, float], torch.Tensor]:
    """Utility, in-game adversary, α-MI estimate, and (``attack``) a fresh deep attacker on the released splits."""
    released_test = release(m.releaser, test.x, gen)
    with torch.no_grad():
        posteriors = torch.cat([m.adversary(c).softmax(1) for c in released_test.split(1024)])
        leakage = leakage_alpha_mi(posteriors, cfg.alpha).item()
    metrics = {
        "utility/accuracy": evaluate(m.utility, released_test, test.digit, 10),
        "utility/mse": F.mse_loss(released_test, test.x).item(),
        "train/adversary_accuracy": evaluate(m.adversary, released_test, test.thick, 2),
        "leakage/normalised_alpha_mi": leakage,
    }
    if attack:
        t0 = time.perf_counter()
        released_train = release(m.releaser, train.x, gen)
        result = DeepAttacker(AttackBudget.from_config(cfg.as_dict())).run(
            AttackInput(released_train, train.thick, released_test, test.thick, num_classes=2)
        )
        metrics.update(result.logged())
        metrics["time/attack_s"] = time.perf_counter() - t0
    return metrics, released_test


def load_data(cfg: AmnistTrialConfig, device: torch.device) -> tuple[AmnistSplit, AmnistSplit]:
    """The trial's AMNIST train/test subsets, moved to ``device`` once for the whole trial."""
    train, test, _ = load_amnist(cfg.data_root or str(default_data_root()), n_train=cfg.n_train, n_test=cfg.n_test,
                                 seed=cfg.seed, download=cfg.download)
    return tuple(AmnistSplit(s.x.to(device), s.digit.to(device), s.thick.to(device)) for s in (train, test))


@dataclass
class EpochOutcome:
    """What one epoch of the game produced: its metrics, the models after it, and the released test images."""

    epoch: int
    checkpoint: bool
    metrics: dict[str, float]
    models: Any  # the mechanism's networks (releaser: Models)
    test: AmnistSplit
    released_test: torch.Tensor


def run_game(cfg: ReleaserConfig, device: torch.device, restore: Callable[[Models], int] | None = None) -> Iterator[EpochOutcome]:
    """Algorithm 1 epoch by epoch: fresh (pre-trained) players, or those ``restore`` loads, which returns epochs done.

    Every ``checkpoint_every``-th epoch and the last are checkpoint epochs: the deep attacker runs
    there (and the farm attacks their checkpoints), other epochs report training and utility only.
    """
    t0 = time.perf_counter()
    train, test = load_data(cfg, device)
    prior = torch.bincount(train.thick, minlength=2).float() / len(train)
    models = Models.build(cfg, device)
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
            lambda: train_epoch(cfg, models, train, prior, gen),
            lambda attack: evaluate_release(cfg, models, train, test, prior, gen, attack=attack)):
        yield EpochOutcome(epoch, checkpoint, metrics, models, test, released_test)


def write_checkpoint(cfg: ReleaserConfig, outcome: EpochOutcome, directory: Path) -> None:
    """Everything needed to resume, plus the original-vs-released figure, into ``directory``."""
    torch.save({"models": outcome.models.state(), "epoch": outcome.epoch, "config": cfg.as_dict()}, directory / STATE_FILE)
    k = cfg.samples_in_figure
    save_release_grid(outcome.test.x[:k], outcome.released_test[:k], directory / FIGURE_FILE,
                      f"α={cfg.alpha:g} λ={cfg.lam:g} k={cfg.adv_steps} epoch {outcome.epoch}",
                      digit_thickness(outcome.test.digit[:k], outcome.test.thick[:k]))


def train_releaser(config: dict) -> None:
    """Ray Tune function trainable: reports metrics every epoch and checkpoints, resumes from the last checkpoint."""
    cfg = ReleaserConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    report_game(lambda restore: run_game(cfg, pick_device(), restore), load_checkpoint,
                lambda outcome, directory: write_checkpoint(cfg, outcome, directory))


def checkpoint_inputs(config: dict, checkpoint_dir: str) -> CheckpointInputs:
    """What the attack farm needs from one checkpoint: released splits (with digits and raw inputs) and the nets."""
    cfg = ReleaserConfig.from_dict(config)
    torch.set_num_threads(cfg.threads)
    device = pick_device()
    models = Models.build(cfg, device)
    epoch = load_checkpoint(checkpoint_dir, models)
    train, test = load_data(cfg, device)
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 1000 + epoch)
    released_train, released_test = release(models.releaser, train.x, gen), release(models.releaser, test.x, gen)
    data = AttackInput(released_train, train.thick, released_test, test.thick, num_classes=2,
                       train_u=train.digit, test_u=test.digit, raw_train_x=train.x)
    population = load_population(cfg, device)
    pop_gen = torch.Generator(device=device).manual_seed(cfg.seed + 2000 + epoch)
    released_pop = release(models.releaser, population.x, pop_gen) if len(population) else population.x
    cache = reference_cache_dir(checkpoint_dir, per_checkpoint=True)
    # Both networks start on raw images (pretrain_epochs) and then train on the release; references train on
    # the released population for as many epochs in all (the adversary gets adv_steps batches per step).
    refs = {name: amnist_reference(SmallCNN, classes, cfg.width, epochs, cfg, released_pop, labels, None, cache)
            for name, classes, epochs, labels in (
                ("utility", 10, cfg.pretrain_epochs + epoch, population.digit),
                ("adversary", 2, cfg.pretrain_epochs + epoch * cfg.adv_steps, population.thick))}
    targets = (
        MembershipTarget("utility", models.utility, released_train, train.digit, released_test, test.digit, refs["utility"]),
        MembershipTarget("adversary", models.adversary, released_train, train.thick, released_test, test.thick, refs["adversary"]),
    )
    return CheckpointInputs(data, targets)


def load_population(cfg: AmnistTrialConfig, device: torch.device) -> AmnistSplit:
    """AMNIST training images outside the trial's subset (never seen by its networks), on ``device``."""
    pop = load_amnist_population(cfg.data_root or str(default_data_root()), n_train=cfg.n_train, seed=cfg.seed,
                                 download=cfg.download)
    return AmnistSplit(pop.x.to(device), pop.digit.to(device), pop.thick.to(device))


def amnist_reference(net: Callable[..., torch.nn.Module], classes: int, width: int, epochs: int, cfg: AmnistTrialConfig,
                     train_x: torch.Tensor, labels: torch.Tensor, query_x: torch.Tensor | None,
                     cache_dir: str) -> ReferenceData | None:
    """Reference data for an AMNIST network: ``net(classes, width)`` trained ``epochs`` epochs with the trial's
    batch size and learning rate; None when the trial trains on all of AMNIST (no population left)."""
    if len(labels) < 2:
        return None
    recipe = ClassifierRecipe(partial(net, classes, width), max(epochs, 1), cfg.batch_size, cfg.lr)
    return ReferenceData(recipe, train_x, labels, query_x, cache_dir=cache_dir)


def load_release(config: dict, checkpoint_dir: str) -> ReleaseMap:
    """The checkpoint's releaser as a served map: 1×28×28 images in [0, 1] to released images."""
    cfg = ReleaserConfig.from_dict(config)
    models = Models.build(cfg, torch.device("cpu"))
    load_checkpoint(checkpoint_dir, models)
    return ReleaseMap("releaser", (1, 28, 28), (0.0, 1.0), models.releaser.eval(), release)


def raw_baselines(config: dict) -> dict[str, float]:
    """Digit and thickness accuracy of fresh classifiers on unreleased images: the PUT's two ends."""
    return baselines_for(ReleaserConfig.from_dict(config))


def baselines_for(cfg: AmnistTrialConfig) -> dict[str, float]:
    """:func:`raw_baselines` for any AMNIST mechanism's typed config: every attacker kind on unreleased images.

    The tuned digit classifier is the utility a data user gets from raw images; the deep attacker's raw
    accuracy is the calibration of the farm's learned attackers (``deep_raw`` applied to raw test images
    is the same fit, so it logs the same number); the thickness rule is exact on raw images by construction.
    """
    torch.set_num_threads(cfg.threads)
    train, test = load_data(cfg, pick_device())
    budget = AttackBudget.from_config(cfg.as_dict())
    raw = AttackInput(train.x, train.thick, test.x, test.thick, num_classes=2, train_u=train.digit, test_u=test.digit,
                      raw_train_x=train.x)
    thick = RawTrainedDeepAttacker(budget).run(raw)  # deep_raw's own fit, cached: the farm's deep_raw reuses it
    digit = DeepAttacker(budget).run(AttackInput(train.x, train.digit, test.x, test.digit, num_classes=10))
    rule = ThicknessAttacker(seed=cfg.seed).run(raw)
    metrics = {f"baseline/utility/{k}": digit.metrics[k] for k in ("accuracy", "accuracy/ci_low", "accuracy/ci_high")}
    for kind, result in (("deep", thick), ("deep_raw", thick), ("thickness", rule)):
        metrics |= {f"baseline/attack/{kind}/{k}": result.metrics[k] for k in ("accuracy", "accuracy/ci_low", "accuracy/ci_high")}
    return metrics


def data_counts(config: dict) -> dict[str, int]:
    """Image counts of the data a trial with this config trains and tests on (fails early if no data)."""
    return counts_for(ReleaserConfig.from_dict(config))


def counts_for(cfg: AmnistTrialConfig) -> dict[str, int]:
    """:func:`data_counts` for any AMNIST mechanism's typed config."""
    _, _, counts = load_amnist(cfg.data_root or str(default_data_root()), n_train=cfg.n_train, n_test=cfg.n_test,
                               seed=cfg.seed, download=cfg.download)
    return counts
