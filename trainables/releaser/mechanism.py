"""The α-MI releaser (docs/mechanisms.md#α-mi-releaser, Algorithm 1) as a :class:`~trainables.shared.mechanism.Mechanism`.

Each iteration trains the adversary k times on fresh batches of the current release, the utility
net once, then the releaser once on  L_R = E‖X − Y‖² + CE(utility(Y), U) + λ·Î_α(S;Y)/H_α(S)  (the paper's distortion:
each image's squared error summed over its pixels), with its own step size and an optional gradient-norm clip.
Every epoch ends with an evaluation (utility, PSNR/SSIM, the in-game adversary); checkpoint epochs add a fresh deep
attacker of S and the data user's two digit classifiers (fresh on the release, fixed from raw images).
"""
from __future__ import annotations

import math
from functools import partial
from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F
from torch.optim.swa_utils import update_bn

from attacks.base import CheckpointInputs
from core.image_quality import image_quality, squared_error
from core.metric_names import NORMALISED_ALPHA_MI, UTILITY_ACCURACY
from core.nets import ConvReleaser, game_classifier
from core.reference_models import reference_cache_dir
from core.training import batches, evaluate, fit_classifier
from trainables.releaser.config import ReleaserConfig
from trainables.shared.alpha_mi import leakage_alpha_mi, normalised_alpha_mi
from trainables.shared.image_game import ImageGame, classifier_reference
from trainables.shared.mechanism import Capability
from trainables.shared.release_map import release

NETWORKS = ("releaser", "adversary", "utility", "opt_r", "opt_a", "opt_u")  # a checkpoint's state, by name
RESTART_SEED_STRIDE = 100_003  # a restarted adversary's weights: torch seed = seed + stride · (epochs done + 1)
MULTIPLIER = "distortion_multiplier"  # (dual variable, weight) of the squared error in a checkpoint's state


def distortion_multiplier(dual: float, distortion: float, target: float, lr: float, kp: float) -> tuple[float, float]:
    """One step of the squared error's Lagrange multiplier on the constraint E‖X − Y‖² ≤ target: the dual variable
    moves by projected dual ascent (up while the distortion exceeds the target, down while below, never below 0), and
    the weight the releaser's next step uses adds a proportional term (a PI Lagrangian: it damps the swings a pure
    integral makes). Both steps are in units of the relative violation (distortion − target) / target; returns
    (dual, weight)."""
    violation = (distortion - target) / target
    dual = max(0.0, dual + lr * violation)
    return dual, max(0.0, dual + kp * violation)


class Releaser(ImageGame):
    """The releaser R(X, Z), the in-game thickness adversary and the digit utility net, each with its optimiser."""
    capabilities: ClassVar[frozenset[Capability]] = ImageGame.capabilities | {Capability.FARM}

    name = "releaser"
    config_class = ReleaserConfig
    trainable_name = "train_releaser"
    game_knobs = frozenset({"alpha", "lam", "adv_steps", "squared_error_weight", "utility_ce_weight", "clip_norm",
                            "adversary_restart_every", "adversary_restart_steps", "distortion_target", "multiplier_lr",
                            "multiplier_kp"})
    game_state = frozenset({MULTIPLIER})
    cfg: ReleaserConfig

    @property
    def net(self) -> nn.Module:
        return self.releaser

    def build(self) -> None:
        """Fresh networks on the device, seeded by the config."""
        cfg, device = self.cfg, self.device
        torch.manual_seed(cfg.seed)
        self.releaser = self.releasing_net().to(device)
        self.adversary = self.fresh_adversary()
        self.utility = game_classifier(self.u_classes, cfg.width, self.shape, cfg.player_input_norm).to(device)
        self.opt_r = torch.optim.Adam(self.releaser.parameters(), lr=cfg.releaser_lr or cfg.lr)
        self.opt_a = torch.optim.Adam(self.adversary.parameters(), lr=cfg.lr)
        self.opt_u = torch.optim.Adam(self.utility.parameters(), lr=cfg.lr)
        # the squared error's weight: fixed, or (distortion_target) a Lagrange multiplier and its dual variable
        self.dual = self.multiplier = cfg.squared_error_weight

    def releasing_net(self) -> nn.Module:
        """The releaser R(X, Z): the conv encoder-decoder (its weights from torch's current seed)."""
        cfg = self.cfg
        return ConvReleaser(cfg.width, cfg.noise_channels, self.shape, cfg.latent)

    def state(self) -> dict:
        return ({name: getattr(self, name).state_dict() for name in NETWORKS}
                | {MULTIPLIER: torch.tensor([self.dual, self.multiplier], dtype=torch.float64)})

    def load_state(self, state: dict) -> None:
        for name, value in state.items():
            if name == MULTIPLIER:
                self.dual, self.multiplier = (float(v) for v in value)
            else:
                getattr(self, name).load_state_dict(value)

    def compute_pretrain(self) -> None:
        """The releaser as an autoencoder (Y ≈ X), the utility net and adversary on raw images.

        The game then starts from the full-utility end of the trade-off with informed players, instead
        of spending its first epochs on grey noise.
        """
        self.pretrain_autoencoder(self.opt_r)
        self.pretrain_players()

    def pretrain_players(self) -> None:
        """The utility net and the adversary fitted on raw images for ``pretrain_epochs``."""
        cfg, train = self.cfg, self.train
        if cfg.pretrain_epochs:
            fit = partial(fit_classifier, epochs=cfg.pretrain_epochs, batch_size=cfg.batch_size, lr=cfg.lr, generator=self.gen)
            fit(self.utility, train.x, train.u)
            fit(self.adversary, train.x, train.s)

    def train_epoch(self) -> dict[str, float]:
        """One pass of Algorithm 1 over the training split; returns mean training losses and, in the constrained form,
        the squared error's mean weight (``train/distortion_multiplier``: a Lagrange multiplier moved every step)."""
        cfg, train, gen = self.cfg, self.train, self.gen
        n, device = len(train), train.x.device
        sums = {"loss_releaser": 0.0, "loss_adversary": 0.0, "loss_utility": 0.0, "squared_error": 0.0,
                "privacy_term": 0.0, "releaser_grad_norm": 0.0}
        target = cfg.distortion_target  # the constrained form's, else None
        if target is not None:
            sums["distortion_multiplier"] = 0.0
        steps = 0
        if cfg.adversary_restart_every and self.epoch % cfg.adversary_restart_every == 0:
            self.restart_adversary()
        for idx in batches(n, cfg.batch_size, gen, device):
            for _ in range(cfg.adv_steps):
                loss_a = self.adversary_step()

            x, u = train.x[idx], train.u[idx]
            y = self.releaser(x, gen)
            loss_u = F.cross_entropy(self.utility(y.detach()), u)
            self.opt_u.zero_grad(set_to_none=True)
            loss_u.backward()
            self.opt_u.step()

            distortion = squared_error(y, x)
            privacy = self.privacy_term(y)
            weight = self.multiplier  # the squared error's: fixed, or the constrained form's multiplier
            loss_r = (weight * distortion + cfg.utility_ce_weight * F.cross_entropy(self.utility(y), u)
                      + cfg.lam * privacy)
            self.opt_r.zero_grad(set_to_none=True)
            loss_r.backward()
            # the norm before clipping (with an infinite bound nothing is clipped): how hard the releaser is pushed
            grad_norm = torch.nn.utils.clip_grad_norm_(self.releaser.parameters(), cfg.clip_norm or math.inf)
            self.opt_r.step()
            if target is not None:
                sums["distortion_multiplier"] += weight
                self.dual, self.multiplier = distortion_multiplier(self.dual, distortion.item(), target, cfg.multiplier_lr,
                                                                   cfg.multiplier_kp)

            steps += 1
            for key, value in (("loss_releaser", loss_r), ("loss_adversary", loss_a), ("loss_utility", loss_u),
                               ("squared_error", distortion), ("privacy_term", privacy), ("releaser_grad_norm", grad_norm)):
                sums[key] += value.item()
        return {f"train/{k}": v / steps for k, v in sums.items()}

    def privacy_term(self, y: torch.Tensor) -> torch.Tensor:
        """Î_α(S;Y)/H_α(S) as the in-game adversary reads the released batch ``y`` (differentiable in ``y``)."""
        return normalised_alpha_mi(self.adversary(y).softmax(1), self.prior, self.cfg.alpha)

    def adversary_step(self) -> torch.Tensor:
        """One adversary update on a fresh batch of the current release; its loss."""
        train, gen = self.train, self.gen
        idx = torch.randint(len(train), (self.cfg.batch_size,), generator=gen, device=gen.device).to(train.x.device)
        with torch.no_grad():
            released = self.releaser(train.x[idx], gen)
        loss = F.cross_entropy(self.adversary(released), train.s[idx])
        self.opt_a.zero_grad(set_to_none=True)
        loss.backward()
        self.opt_a.step()
        return loss

    def fresh_adversary(self) -> torch.nn.Module:
        """An untrained in-game adversary on the device (its weights from torch's current seed)."""
        cfg = self.cfg
        return game_classifier(self.s_classes, cfg.width, self.shape, cfg.player_input_norm).to(self.device)

    def restart_adversary(self) -> None:
        """A fresh adversary (weights seeded by the seed and the epoch, so a resumed game restarts the same one) trained
        ``adversary_restart_steps`` batches on the current release."""
        cfg = self.cfg
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.seed + RESTART_SEED_STRIDE * (self.epoch + 1))
            self.adversary = self.fresh_adversary()
        self.opt_a = torch.optim.Adam(self.adversary.parameters(), lr=cfg.lr)
        for _ in range(cfg.adversary_restart_steps):
            self.adversary_step()

    def adversary_epochs(self, epoch: int) -> int:
        """Passes over the training split the adversary at ``epoch`` has trained since its weights were fresh (what its
        membership references mirror): from its raw-data fit, or from its last restart."""
        cfg, every = self.cfg, self.cfg.adversary_restart_every
        if not every:
            return cfg.pretrain_epochs + epoch * cfg.adv_steps
        steps_per_epoch = math.ceil(len(self.train) / cfg.batch_size)
        since_restart = epoch - (epoch - 1) // every * every
        return math.ceil(cfg.adversary_restart_steps / steps_per_epoch) + since_restart * cfg.adv_steps

    def evaluate(self, attack: bool) -> dict[str, float]:
        """Utility, image quality, in-game adversary, α-MI estimate, and (``attack``) a fresh deep attacker of S and
        the data user's digit classifiers on the released splits."""
        test, released_test = self.test, self.release_test()
        with torch.no_grad():
            posteriors = torch.cat([self.adversary(c).softmax(1) for c in released_test.split(1024)])
            leakage = leakage_alpha_mi(posteriors, self.cfg.alpha).item()
        self.recalibrate_players()
        metrics = {
            UTILITY_ACCURACY: evaluate(self.utility, released_test, test.u, self.u_classes),
            "utility/mse": F.mse_loss(released_test, test.x).item(),
            "train/adversary_accuracy": evaluate(self.adversary, released_test, test.s, self.s_classes),
            NORMALISED_ALPHA_MI: leakage,
        } | image_quality(released_test, test.x)
        return metrics | (self.deep_attack() | self.data_user() if attack else {})

    def recalibrate_players(self) -> None:
        """The players' input statistics (their batch norms' running means and variances) recomputed on the current
        release of the training split, the game's generator left where it was, so that evaluation standardises the
        release as training does. Running statistics trail a release that moves every step; on a faint release (a
        per-pixel spread of 1e-4) a lag of a few hundredths in a pixel's mean is hundreds of its spreads. Players
        without ``player_input_norm`` keep no statistics."""
        if not self.cfg.player_input_norm:
            return
        drawn = self.gen.get_state()
        released_train = release(self.releaser, self.train.x, self.gen)
        self.gen.set_state(drawn)
        with torch.no_grad():
            for player in (self.utility, self.adversary):
                update_bn(released_train.split(self.cfg.batch_size), player)

    def figure_title(self, epoch: int) -> str:
        quality = image_quality(self.released_test, self.test.x)
        return (f"α={self.cfg.alpha:g} λ={self.cfg.lam:g} k={self.cfg.adv_steps} epoch {epoch}: "
                f"PSNR {quality['utility/psnr']:.1f} dB, SSIM {quality['utility/ssim']:.2f}")

    def farm_inputs(self) -> CheckpointInputs:
        """Released splits (with U and raw inputs) and the utility net and adversary as membership targets (with their
        canaries, if any)."""
        cfg, epoch = self.cfg, self.epoch
        released = self.released_splits()
        data, population, released_pop = released.data, released.population, released.population_x
        assert self.checkpoint_dir is not None  # the farm restores its mechanisms from a checkpoint
        cache = reference_cache_dir(self.checkpoint_dir, per_checkpoint=True)
        # Both networks start on raw images (pretrain_epochs) and then train on the release; references train on
        # the released population for as many epochs in all (the adversary gets adv_steps batches per step, and starts
        # afresh at each restart).
        refs = {name: classifier_reference(classes, epochs, cfg, self.shape, released_pop, labels, None, cache,
                                           cfg.player_input_norm)
                for name, classes, epochs, labels in (
                    ("utility", self.u_classes, cfg.pretrain_epochs + epoch, population.u),
                    ("adversary", self.s_classes, self.adversary_epochs(epoch), population.s))}
        return CheckpointInputs(data, (self.membership_target("utility", self.utility, released, "u", refs["utility"]),
                                       self.membership_target("adversary", self.adversary, released, "s",
                                                              refs["adversary"])))
