"""A learned per-pixel Gaussian-noise release on AMNIST: a worked example of your own putlab mechanism.

The release adds Gaussian noise with a learned standard deviation per pixel, Y = clamp(X + σ ⊙ N(0, I), 0, 1),
σ = exp(log_sigma) per pixel and channel of the data set's images (1×28×28 on AMNIST, the default; any image set of
putlab's registry works, e.g. ``--set dataset=cifar10``). Each training step fits an adversary of S and a utility net
of U on the release, then moves log σ to minimise

    L = CE(utility(Y), U) + mse_weight · MSE(Y, X) + λ · CE(adversary(Y), uniform)

so U stays readable and distortion stays small while the adversary is pushed towards a coin toss about S (on AMNIST:
U = digit, S = stroke thickness). λ is the privacy knob: at λ = 0 the noise shrinks, larger λ buys more noise where
S shows. The methods below are the whole :class:`trainables.shared.mechanism.Mechanism` interface.
"""
from __future__ import annotations

import math
from functools import partial
from pathlib import Path
from typing import ClassVar

import torch
from pydantic import Field
from torch import nn
from torch.nn import functional as F

from attacks.attackers.deep import DeepAttacker
from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from core.config import AttackBudget, Checkpointing, Dataset, ImageData, MembershipAttacks, Training
from core.data import Split
from core.nets import SmallCNN
from core.reference_models import ClassifierRecipe, reference_cache_dir
from core.training import batches, evaluate, fit_classifier
from trainables.shared.image_data import baselines_for, image_layout, load_splits
from trainables.shared.mechanism import Capability, Mechanism
from trainables.shared.release_map import ReleaseMap, release

SIGMA_FIGURE = "sigma.png"
NETWORKS = ("noise", "adversary", "utility", "opt_noise", "opt_a", "opt_u")  # a checkpoint's state, by name


class GaussianNoiseConfig(ImageData, Training, AttackBudget, Checkpointing, MembershipAttacks):
    """Every knob of one trial (the flat dict Tune passes in): the shared groups (data, training, the farm's attacker
    budget, checkpoints, membership references) plus this mechanism's own; bad values are one-line errors."""

    kind = "gaussian_noise"

    dataset: Dataset = "amnist"
    lam: float = Field(1.0, ge=0, le=1e6, description="Privacy weight λ: how hard the noise confuses the adversary.")
    mse_weight: float = Field(10.0, ge=0, le=1e6, description="Distortion weight: the price of noise.")
    sigma_init: float = Field(0.1, gt=0, le=10, description="σ of every pixel at the start.")
    noise_lr: float = Field(0.05, gt=0, le=10, description="Learning rate of log σ.")
    width: int = Field(16, ge=1, le=1024, description="Base width of the adversary and utility nets.")
    pretrain_epochs: int = Field(1, ge=0, le=10_000, description="Utility net and adversary first fitted on raw images.")


class NoiseRelease(nn.Module):
    """Y = clamp(X + exp(log_sigma) ⊙ Z, 0, 1) with Z ~ N(0, I) drawn from the given generator."""

    def __init__(self, sigma_init: float, shape: tuple[int, ...]) -> None:
        super().__init__()
        self.log_sigma = nn.Parameter(torch.full((1, *shape), math.log(sigma_init)))

    def forward(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        noise = torch.randn(x.shape, generator=generator, device=x.device)
        return (x + self.log_sigma.exp() * noise).clamp(0.0, 1.0)


def on_device(split: Split, device: torch.device) -> Split:
    """``split`` (x, private S, utility U) with its tensors on ``device``."""
    return Split(split.x.to(device), split.s.to(device), split.u.to(device))


class GaussianNoise(Mechanism[GaussianNoiseConfig]):
    """The noise map, the in-game adversary of S and the utility net of U, each with its optimiser."""
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.FARM, Capability.SERVE, Capability.RAW_REFERENCE})

    name = "gaussian_noise"
    config_class = GaussianNoiseConfig
    trainable_name = "train_gaussian_noise"
    figures = (SIGMA_FIGURE,)

    # --- the game -------------------------------------------------------------------------------------------------
    def setup(self) -> None:
        splits = load_splits(self.cfg)  # the registry entry the config names (putlab's loader)
        self.train, self.test = on_device(splits.train, self.device), on_device(splits.test, self.device)
        self.build()
        self.gen = torch.Generator(device=self.device).manual_seed(self.cfg.seed)

    def build(self) -> None:
        cfg = self.cfg
        torch.manual_seed(cfg.seed)
        self.shape, self.s_classes, self.u_classes = image_layout(cfg)  # from the registry entry: AMNIST by default
        self.noise = NoiseRelease(cfg.sigma_init, self.shape).to(self.device)
        self.adversary = SmallCNN(self.s_classes, cfg.width, in_shape=self.shape).to(self.device)
        self.utility = SmallCNN(self.u_classes, cfg.width, in_shape=self.shape).to(self.device)
        self.opt_noise = torch.optim.Adam(self.noise.parameters(), lr=cfg.noise_lr)
        self.opt_a = torch.optim.Adam(self.adversary.parameters(), lr=cfg.lr)
        self.opt_u = torch.optim.Adam(self.utility.parameters(), lr=cfg.lr)

    def pretrain(self) -> None:
        """The utility net and adversary start informed: fitted on raw images."""
        cfg = self.cfg
        if cfg.pretrain_epochs:
            common = {"epochs": cfg.pretrain_epochs, "batch_size": cfg.batch_size, "lr": cfg.lr, "generator": self.gen}
            fit_classifier(self.utility, self.train.x, self.train.u, **common)
            fit_classifier(self.adversary, self.train.x, self.train.s, **common)

    def train_epoch(self) -> dict[str, float]:
        cfg, train = self.cfg, self.train
        sums, steps = {"loss_noise": 0.0, "loss_adversary": 0.0, "loss_utility": 0.0, "mse": 0.0}, 0
        for idx in batches(len(train), cfg.batch_size, self.gen, train.x.device):
            x, u, s = train.x[idx], train.u[idx], train.s[idx]
            y = self.noise(x, self.gen)
            loss_a = F.cross_entropy(self.adversary(y.detach()), s)  # the players learn on the current release
            loss_u = F.cross_entropy(self.utility(y.detach()), u)
            for opt, loss in ((self.opt_a, loss_a), (self.opt_u, loss_u)):
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            mse = F.mse_loss(y, x)
            confusion = -self.adversary(y).log_softmax(1).mean(1).mean()  # CE to the uniform guess: log 2 at best
            loss = F.cross_entropy(self.utility(y), u) + cfg.mse_weight * mse + cfg.lam * confusion
            self.opt_noise.zero_grad(set_to_none=True)
            loss.backward()
            self.opt_noise.step()
            steps += 1
            for key, value in zip(sums, (loss, loss_a, loss_u, mse), strict=True):
                sums[key] += value.item()
        return {f"train/{k}": v / steps for k, v in sums.items()}

    def evaluate(self, attack: bool) -> dict[str, float]:
        """Utility, distortion, the in-game adversary, σ, and (``attack``) a fresh deep attacker on the release."""
        test = self.test
        released = release(self.noise, test.x, self.gen)
        sigma = self.noise.log_sigma.exp()
        metrics = {
            "utility/accuracy": evaluate(self.utility, released, test.u, self.u_classes),
            "utility/mse": F.mse_loss(released, test.x).item(),
            "train/adversary_accuracy": evaluate(self.adversary, released, test.s, self.s_classes),
            "train/sigma_mean": sigma.mean().item(),
            "train/sigma_max": sigma.max().item(),
        }
        if attack:
            data = AttackInput(release(self.noise, self.train.x, self.gen), self.train.s, released, test.s, self.s_classes)
            metrics |= DeepAttacker(self.cfg).run(data).logged()
        return metrics

    # --- checkpoints ----------------------------------------------------------------------------------------------
    def state(self) -> dict:
        return {k: getattr(self, k).state_dict() for k in NETWORKS}

    def load_state(self, state: dict) -> None:
        for key, value in state.items():
            getattr(self, key).load_state_dict(value)

    def write_figures(self, directory: Path, epoch: int) -> None:
        """The σ map as an image: where the noise hides thickness."""
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot as plt

        fig, ax = plt.subplots(figsize=(3.2, 3))
        shown = ax.imshow(self.noise.log_sigma.exp()[0].mean(0).detach().cpu(), cmap="magma")  # channels averaged
        fig.colorbar(shown, ax=ax, label="σ")
        ax.set_title(f"λ={self.cfg.lam:g} epoch {epoch}")
        ax.axis("off")
        fig.savefig(directory / SIGMA_FIGURE, dpi=100, bbox_inches="tight")
        plt.close(fig)

    # --- the farm, serving and the driver -------------------------------------------------------------------------
    def farm_inputs(self) -> CheckpointInputs:
        """Released splits (S, U and the raw training images) and the utility net as membership target.

        The utility net's references (for RMIA and LiRA) train on the released population: AMNIST images outside
        the trial's subset, released with this checkpoint's σ.
        """
        cfg, train, test = self.cfg, self.train, self.test
        gen = torch.Generator(device=self.device).manual_seed(cfg.seed + 1000 + self.epoch)
        data = AttackInput(release(self.noise, train.x, gen), train.s, release(self.noise, test.x, gen), test.s,
                           num_classes=self.s_classes, train_u=train.u, test_u=test.u, raw_train_x=train.x,
                           dataset=cfg.dataset)
        pop = load_splits(cfg, population=True).population
        reference = None
        if pop is not None and len(pop) >= 2:  # a trial on the whole set leaves no population
            epochs = cfg.pretrain_epochs + self.epoch  # as many as the utility net had
            net = partial(SmallCNN, self.u_classes, cfg.width, in_shape=self.shape)
            recipe = ClassifierRecipe(net, epochs, cfg.batch_size, cfg.lr)
            population = pop.x.to(self.device)
            # released when RMIA or LiRA first reads it (a farm without them never pays for it)
            reference = ReferenceData(recipe, lambda: release(self.noise, population, gen), pop.u.to(self.device),
                                      cache_dir=reference_cache_dir(self.checkpoint_dir, per_checkpoint=True))
        return CheckpointInputs(data, (MembershipTarget("utility", self.utility, data.train_x, train.u, data.test_x,
                                                        test.u, reference),))

    def release_map(self) -> ReleaseMap:
        return ReleaseMap(self.name, tuple(self.shape), (0.0, 1.0), self.noise.eval(), release)

    @classmethod
    def raw_references(cls, config: dict) -> dict[str, float]:
        """putlab's reference points on unreleased images (a tuned utility classifier, every attacker kind)."""
        return baselines_for(cls.typed(config))

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        return load_splits(cls.typed(config)).counts
