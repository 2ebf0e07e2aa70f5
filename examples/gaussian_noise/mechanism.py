"""A learned per-pixel Gaussian-noise release on AMNIST: a worked example of your own putlab mechanism.

The release adds Gaussian noise with a learned standard deviation per pixel, Y = clamp(X + σ ⊙ N(0, I), 0, 1),
σ = exp(log_sigma) over 1×28×28. Each training step fits a thickness adversary and a digit utility net on the
release, then moves log σ to minimise

    L = CE(utility(Y), digit) + mse_weight · MSE(Y, X) + λ · CE(adversary(Y), uniform)

so the digit stays readable and distortion stays small while the adversary is pushed towards a coin toss about stroke
thickness (S = thick, U = digit). λ is the privacy knob: at λ = 0 the noise shrinks, larger λ buys more noise where
thickness shows. The methods below are the whole :class:`trainables.mechanism.Mechanism` interface.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from attacks.base import AttackInput, CheckpointInputs, MembershipTarget, ReferenceData
from attacks.deep import DeepAttacker
from attacks.reference import ClassifierRecipe, reference_cache_dir
from attacks.tuning import AttackBudget
from core.data import AmnistSplit, default_data_root, load_amnist, load_amnist_population
from core.nets import SmallCNN
from core.training import batches, evaluate, fit_classifier
from trainables.amnist_common import baselines_for
from trainables.mechanism import Mechanism
from trainables.release_map import ReleaseMap, release
from trainables.typed_config import TypedConfig

SIGMA_FIGURE = "sigma.png"
NETWORKS = ("noise", "adversary", "utility", "opt_noise", "opt_a", "opt_u")  # a checkpoint's state, by name


@dataclass(frozen=True)
class GaussianNoiseConfig(TypedConfig):
    """Every knob of one trial (the flat dict Tune passes in); unknown keys and bad values are one-line errors."""

    kind = "gaussian_noise"

    mechanism: str = "gaussian_noise"
    dataset: str = "amnist"
    lam: float = 1.0  # privacy weight λ: how hard the noise confuses the thickness adversary
    mse_weight: float = 10.0  # distortion weight: the price of noise
    sigma_init: float = 0.1  # σ of every pixel at the start
    noise_lr: float = 0.05  # learning rate of log σ
    seed: int = 0
    epochs: int = 3
    batch_size: int = 128
    lr: float = 1e-3  # the utility net's and adversary's learning rate
    width: int = 16
    pretrain_epochs: int = 1  # utility net and adversary first fitted on raw images
    n_train: int | None = None
    n_test: int | None = None
    data_root: str = ""
    download: bool = False
    attack_epochs: int = 60  # the farm's and the own deep attacker's epoch cap (read by attacks.tuning.AttackBudget)
    attack_patience: int = 10
    attack_search: str = "halving"
    checkpoint_every: int = 1
    threads: int = 1
    mia_references: int = 2  # reference models for the farm's RMIA and LiRA
    rmia_offline_a: float = 0.3

    def checks(self) -> list[tuple[bool, str]]:
        return [
            (self.lam >= 0, f"lam must be >= 0 (got {self.lam})"),
            (self.sigma_init > 0, f"sigma_init must be > 0 (got {self.sigma_init})"),
            (self.noise_lr > 0, f"noise_lr must be > 0 (got {self.noise_lr})"),
            (self.epochs >= 1, f"epochs must be >= 1 (got {self.epochs})"),
            (self.attack_search in ("halving", "full"),
             f"attack_search must be halving or full (got {self.attack_search!r})"),
        ]


class NoiseRelease(nn.Module):
    """Y = clamp(X + exp(log_sigma) ⊙ Z, 0, 1) with Z ~ N(0, I) drawn from the given generator."""

    def __init__(self, sigma_init: float) -> None:
        super().__init__()
        self.log_sigma = nn.Parameter(torch.full((1, 1, 28, 28), math.log(sigma_init)))

    def forward(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        noise = torch.randn(x.shape, generator=generator, device=x.device)
        return (x + self.log_sigma.exp() * noise).clamp(0.0, 1.0)


def load_splits(cfg: GaussianNoiseConfig, device: torch.device) -> tuple[AmnistSplit, AmnistSplit, dict[str, int]]:
    """The trial's AMNIST train and test subsets on ``device``, and their image counts."""
    train, test, counts = load_amnist(cfg.data_root or default_data_root(), n_train=cfg.n_train, n_test=cfg.n_test,
                                      seed=cfg.seed, download=cfg.download)
    return (*(AmnistSplit(s.x.to(device), s.digit.to(device), s.thick.to(device)) for s in (train, test)), counts)


class GaussianNoise(Mechanism[GaussianNoiseConfig]):
    """The noise map, the in-game thickness adversary and the digit utility net, each with its optimiser."""

    name = "gaussian_noise"
    config_class = GaussianNoiseConfig
    trainable_name = "train_gaussian_noise"
    figures = (SIGMA_FIGURE,)

    # --- the game -------------------------------------------------------------------------------------------------
    def setup(self) -> None:
        self.train, self.test, _ = load_splits(self.cfg, self.device)
        self.build()
        self.gen = torch.Generator(device=self.device).manual_seed(self.cfg.seed)

    def build(self) -> None:
        cfg = self.cfg
        torch.manual_seed(cfg.seed)
        self.noise = NoiseRelease(cfg.sigma_init).to(self.device)
        self.adversary = SmallCNN(2, cfg.width).to(self.device)
        self.utility = SmallCNN(10, cfg.width).to(self.device)
        self.opt_noise = torch.optim.Adam(self.noise.parameters(), lr=cfg.noise_lr)
        self.opt_a = torch.optim.Adam(self.adversary.parameters(), lr=cfg.lr)
        self.opt_u = torch.optim.Adam(self.utility.parameters(), lr=cfg.lr)

    def pretrain(self) -> None:
        """The utility net and adversary start informed: fitted on raw images."""
        cfg = self.cfg
        if cfg.pretrain_epochs:
            common = dict(epochs=cfg.pretrain_epochs, batch_size=cfg.batch_size, lr=cfg.lr, generator=self.gen)
            fit_classifier(self.utility, self.train.x, self.train.digit, **common)
            fit_classifier(self.adversary, self.train.x, self.train.thick, **common)

    def train_epoch(self) -> dict[str, float]:
        cfg, train = self.cfg, self.train
        sums, steps = {"loss_noise": 0.0, "loss_adversary": 0.0, "loss_utility": 0.0, "mse": 0.0}, 0
        for idx in batches(len(train), cfg.batch_size, self.gen, train.x.device):
            x, digit, thick = train.x[idx], train.digit[idx], train.thick[idx]
            y = self.noise(x, self.gen)
            loss_a = F.cross_entropy(self.adversary(y.detach()), thick)  # the players learn on the current release
            loss_u = F.cross_entropy(self.utility(y.detach()), digit)
            for opt, loss in ((self.opt_a, loss_a), (self.opt_u, loss_u)):
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            mse = F.mse_loss(y, x)
            confusion = -self.adversary(y).log_softmax(1).mean(1).mean()  # CE to the uniform guess: log 2 at best
            loss = F.cross_entropy(self.utility(y), digit) + cfg.mse_weight * mse + cfg.lam * confusion
            self.opt_noise.zero_grad(set_to_none=True)
            loss.backward()
            self.opt_noise.step()
            steps += 1
            for key, value in zip(sums, (loss, loss_a, loss_u, mse)):
                sums[key] += value.item()
        return {f"train/{k}": v / steps for k, v in sums.items()}

    def evaluate(self, attack: bool) -> dict[str, float]:
        """Utility, distortion, the in-game adversary, σ, and (``attack``) a fresh deep attacker on the release."""
        test = self.test
        released = release(self.noise, test.x, self.gen)
        sigma = self.noise.log_sigma.exp()
        metrics = {
            "utility/accuracy": evaluate(self.utility, released, test.digit, 10),
            "utility/mse": F.mse_loss(released, test.x).item(),
            "train/adversary_accuracy": evaluate(self.adversary, released, test.thick, 2),
            "train/sigma_mean": sigma.mean().item(),
            "train/sigma_max": sigma.max().item(),
        }
        if attack:
            data = AttackInput(release(self.noise, self.train.x, self.gen), self.train.thick, released, test.thick, 2)
            metrics |= DeepAttacker(AttackBudget.from_config(self.cfg.as_dict())).run(data).logged()
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
        shown = ax.imshow(self.noise.log_sigma.exp()[0, 0].detach().cpu(), cmap="magma")
        fig.colorbar(shown, ax=ax, label="σ")
        ax.set_title(f"λ={self.cfg.lam:g} epoch {epoch}")
        ax.axis("off")
        fig.savefig(directory / SIGMA_FIGURE, dpi=100, bbox_inches="tight")
        plt.close(fig)

    # --- the farm, serving and the driver -------------------------------------------------------------------------
    def farm_inputs(self) -> CheckpointInputs:
        """Released splits (S = thickness, U = digit, raw training images) and the utility net as membership target.

        The utility net's references (for RMIA and LiRA) train on the released population: AMNIST images outside
        the trial's subset, released with this checkpoint's σ.
        """
        cfg, train, test = self.cfg, self.train, self.test
        gen = torch.Generator(device=self.device).manual_seed(cfg.seed + 1000 + self.epoch)
        data = AttackInput(release(self.noise, train.x, gen), train.thick, release(self.noise, test.x, gen), test.thick,
                           num_classes=2, train_u=train.digit, test_u=test.digit, raw_train_x=train.x)
        pop = load_amnist_population(cfg.data_root or default_data_root(), n_train=cfg.n_train, seed=cfg.seed,
                                     download=cfg.download)
        reference = None
        if len(pop) >= 2:  # a trial on all of AMNIST leaves no population
            epochs = cfg.pretrain_epochs + self.epoch  # as many as the utility net had
            recipe = ClassifierRecipe(partial(SmallCNN, 10, cfg.width), epochs, cfg.batch_size, cfg.lr)
            released_pop = release(self.noise, pop.x.to(self.device), gen)
            reference = ReferenceData(recipe, released_pop, pop.digit.to(self.device),
                                      cache_dir=reference_cache_dir(self.checkpoint_dir, per_checkpoint=True))
        return CheckpointInputs(data, (MembershipTarget("utility", self.utility, data.train_x, train.digit, data.test_x,
                                                        test.digit, reference),))

    def release_map(self) -> ReleaseMap:
        return ReleaseMap(self.name, (1, 28, 28), (0.0, 1.0), self.noise.eval(), release)

    @classmethod
    def raw_baselines(cls, config: dict) -> dict[str, float]:
        """putlab's AMNIST reference points on unreleased images (tuned digit classifier, every attacker kind)."""
        return baselines_for(cls.typed(config))

    @classmethod
    def data_counts(cls, config: dict) -> dict[str, int]:
        return load_splits(cls.typed(config), torch.device("cpu"))[2]
