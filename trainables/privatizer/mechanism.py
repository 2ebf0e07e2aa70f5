"""The AMNIST privatizer (docs/mechanisms.md#privatizer) as a :class:`~trainables.shared.mechanism.Mechanism`: a stochastic
U-Net Q = U(X, Z) trained with the seed's squared privatizer loss against learned (or frozen) estimators.
U = digit, S = thickness.

Estimators: P_η(s|q) (thickness from the release), P_ψ(u|q) (digit from the release), P_φ(u|x) (the provider's digit
classifier on raw images). ``algorithm`` picks the seed's variant:
  1: η, ψ and φ are all trained (cross-entropy, ``estimator_steps`` fresh batches before each privatizer step);
  2: φ is pre-trained on raw images and frozen, and the provider also reads the release with it: P(u|q) := P_φ(u|q);
  3: φ and the raw-data thickness classifier η are both frozen and applied to q; only the U-Net trains.
Each privatizer step minimises (1−α)·[mean log P_φ(u|x)/P(u|q)]² + α·[mean log P_η(s|q)/P(s)]². Setup, checkpoints,
the deep attacker and the farm's released splits are the releaser's (:mod:`trainables.shared.image_release`), so the two
mechanisms' fronts compare.
"""
from __future__ import annotations

import math
from functools import partial
from typing import ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from attacks.base import CheckpointInputs, Deferred, ReferenceData
from core.data import Split
from core.image_quality import image_quality
from core.metric_names import UTILITY_ACCURACY
from core.nets import SmallCNN, StochasticUNet
from core.reference_models import reference_cache_dir
from core.training import batches, evaluate, fit_classifier, predict_logits
from trainables.privatizer.config import PrivatizerConfig
from trainables.privatizer.loss import privatizer_loss
from trainables.privatizer.retrained import retrained_secret_term
from trainables.shared.image_game import ImageGame, classifier_reference
from trainables.shared.mechanism import Capability
from trainables.shared.release_map import release


def _picked(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Log-probability of each sample's label."""
    return logits.log_softmax(1).gather(1, labels[:, None]).squeeze(1)


class Privatizer(ImageGame):
    """The U-Net, the three estimators η, ψ, φ, and the optimisers of what this algorithm trains."""
    capabilities: ClassVar[frozenset[Capability]] = ImageGame.capabilities | {Capability.FARM}

    name = "privatizer"
    config_class = PrivatizerConfig
    trainable_name = "train_privatizer"
    game_knobs = frozenset({"alpha", "estimator_steps"})
    cfg: PrivatizerConfig

    @property
    def net(self) -> StochasticUNet:
        return self.unet

    def setup(self) -> None:
        """The releaser's setup, plus log P(S) for the privatizer loss."""
        super().setup()
        self.log_prior = self.prior.log()

    def build(self) -> None:
        """Fresh networks on the device, seeded by the config; the estimators' optimiser holds only the learned ones."""
        cfg, device = self.cfg, self.device
        torch.manual_seed(cfg.seed)
        self.unet = StochasticUNet(cfg.width, cfg.noise_channels, in_shape=self.shape).to(device)
        s, u, shape = self.s_classes, self.u_classes, self.shape
        self.eta, self.psi, self.phi = (SmallCNN(s, cfg.width, in_shape=shape).to(device),
                                        SmallCNN(u, cfg.width, in_shape=shape).to(device),
                                        SmallCNN(u, cfg.width, in_shape=shape).to(device))
        learned = {1: [self.eta, self.psi, self.phi], 2: [self.eta], 3: []}[cfg.algorithm]
        params = [p for net in learned for p in net.parameters()]
        self.opt_q = torch.optim.Adam(self.unet.parameters(), lr=cfg.lr)
        self.opt_est = torch.optim.Adam(params, lr=cfg.estimator_lr or cfg.lr) if params else None

    @property
    def utility_on_release(self) -> SmallCNN:
        """P(u|q): ψ when learned (Algorithm 1), else the provider's frozen raw-data classifier φ."""
        return self.psi if self.cfg.algorithm == 1 else self.phi

    def frozen(self) -> dict[str, nn.Module]:
        """The estimators this algorithm keeps fixed, by name: none (1), φ (2), φ and η (3)."""
        kept: dict[int, dict[str, nn.Module]] = {1: {}, 2: {"phi": self.phi}, 3: {"phi": self.phi, "eta": self.eta}}
        return kept[self.cfg.algorithm]

    def freeze(self) -> None:
        """Fix the pre-trained estimators of Algorithms 2 and 3."""
        for net in self.frozen().values():
            net.requires_grad_(False)

    def state(self) -> dict:
        nets = {name: getattr(self, name).state_dict() for name in ("unet", "eta", "psi", "phi", "opt_q")}
        return nets | ({"opt_est": self.opt_est.state_dict()} if self.opt_est is not None else {})

    def load_state(self, state: dict) -> None:
        """Restore from :meth:`state` (and re-freeze the fixed estimators)."""
        for name, value in state.items():
            getattr(self, name).load_state_dict(value)
        self.freeze()

    def compute_pretrain(self) -> None:
        """The U-Net as an autoencoder (as the releaser's) and every estimator on raw images; then freeze per algorithm.

        The frozen estimators of Algorithms 2 and 3 are exactly these raw-data classifiers.
        """
        cfg, train = self.cfg, self.train
        self.pretrain_autoencoder(self.opt_q)
        fit = partial(fit_classifier, epochs=max(cfg.pretrain_epochs, 1), batch_size=cfg.batch_size, lr=cfg.lr,
                      generator=self.gen)
        fit(self.phi, train.x, train.u)
        fit(self.eta, train.x, train.s)
        if cfg.algorithm == 1:
            fit(self.psi, train.x, train.u)
        self.freeze()

    def loss_terms(self, x: torch.Tensor, q: torch.Tensor, u: torch.Tensor,
                   s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(log P_φ(u|x) detached, log P(u|q), log P_η(s|q), log P(s)) per sample: the privatizer loss's inputs."""
        with torch.no_grad():
            log_p_u_x = _picked(self.phi(x), u)
        return log_p_u_x, _picked(self.utility_on_release(q), u), _picked(self.eta(q), s), self.log_prior[s]

    def train_epoch(self) -> dict[str, float]:
        """One pass over the training split: estimator steps on fresh batches, then one privatizer step per batch."""
        cfg, train, gen = self.cfg, self.train, self.gen
        n, device = len(train), train.x.device
        sums = {"loss_privatizer": 0.0, "loss_estimators": 0.0, "utility_term": 0.0, "secret_term": 0.0,
                "privatizer_grad_norm": 0.0}
        steps = 0
        for idx in batches(n, cfg.batch_size, gen, device):
            for _ in range(cfg.estimator_steps if self.opt_est is not None else 0):
                est_idx = torch.randint(n, (cfg.batch_size,), generator=gen, device=gen.device).to(device)
                x_e, u_e, s_e = train.x[est_idx], train.u[est_idx], train.s[est_idx]
                with torch.no_grad():
                    q_e = self.unet(x_e, gen)
                ce = F.cross_entropy(self.eta(q_e), s_e)
                if cfg.algorithm == 1:
                    ce = ce + F.cross_entropy(self.psi(q_e), u_e) + F.cross_entropy(self.phi(x_e), u_e)
                assert self.opt_est is not None  # the loop runs only with estimators to learn
                self.opt_est.zero_grad(set_to_none=True)
                ce.backward()
                self.opt_est.step()
                sums["loss_estimators"] += ce.item() / cfg.estimator_steps

            x, u, s = train.x[idx], train.u[idx], train.s[idx]
            log_p_u_x, log_p_u_q, log_p_s_q, log_p_s = self.loss_terms(x, self.unet(x, gen), u, s)
            loss = privatizer_loss(log_p_u_x, log_p_u_q, log_p_s_q, log_p_s, cfg.alpha)
            self.opt_q.zero_grad(set_to_none=True)
            loss.backward()
            # the U-Net's gradient norm (nothing clipped): how hard the game pushes the privatizer, as the releaser's
            sums["privatizer_grad_norm"] += torch.nn.utils.clip_grad_norm_(self.unet.parameters(), math.inf).item()
            self.opt_q.step()
            steps += 1
            sums["loss_privatizer"] += loss.item()
            sums["utility_term"] += (log_p_u_x - log_p_u_q).mean().item()
            sums["secret_term"] += (log_p_s_q - log_p_s).mean().item()
        return {f"train/{k}": v / steps for k, v in sums.items()}

    def evaluate(self, attack: bool) -> dict[str, float]:
        """Utility (P(u|q) and the provider's φ on the release), image quality, the in-game η, both loss terms; with
        ``attack``, a fresh deep attacker, the secret term read by a freshly retrained estimator and the data user's
        classifiers."""
        test, released_test = self.test, self.release_test()
        log_u_x = _picked(predict_logits(self.phi, test.x), test.u)
        log_u_q = _picked(predict_logits(self.utility_on_release, released_test), test.u)
        log_s_q = _picked(predict_logits(self.eta, released_test), test.s)
        metrics = {
            UTILITY_ACCURACY: evaluate(self.utility_on_release, released_test, test.u, self.u_classes),
            "utility/provider_accuracy": evaluate(self.phi, released_test, test.u, self.u_classes),
            "utility/mse": F.mse_loss(released_test, test.x).item(),
            "train/adversary_accuracy": evaluate(self.eta, released_test, test.s, self.s_classes),
            "leakage/utility_term": (log_u_x - log_u_q).mean().item(),
            "leakage/secret_term": (log_s_q - self.log_prior[test.s]).mean().item(),
        } | image_quality(released_test, test.x)
        return metrics | (self.deep_attack() | self.retrained_term() | self.data_user() if attack else {})

    def retrained_term(self) -> dict[str, float]:
        """``leakage/retrained_secret_term``: the secret term of a secret estimator trained afresh on the released
        training split (early-stopped on a validation split of it) and read on the released test split."""
        released_train = release(self.unet, self.train.x, self.gen)
        return retrained_secret_term(released_train, self.train.s, self.released_test, self.test.s, self.s_classes,
                                     self.cfg)

    def figure_title(self, epoch: int) -> str:
        return f"privatizer α={self.cfg.alpha:g} algorithm {self.cfg.algorithm} epoch {epoch}"

    def farm_inputs(self) -> CheckpointInputs:
        """Released splits (with U and raw inputs) and the trained estimators as membership targets (with their canaries,
        if any)."""
        released = self.released_splits()
        population, released_pop = released.population, released.population_x
        return CheckpointInputs(released.data, (
            self.membership_target("utility", self.utility_on_release, released, "u",
                                   self.estimator_reference("utility", population, released_pop)),
            self.membership_target("adversary", self.eta, released, "s",
                                   self.estimator_reference("adversary", population, released_pop)),
        ))

    def estimator_reference(self, role: str, population: Split, released_pop: Deferred) -> ReferenceData | None:
        """Reference data for the utility estimator or the adversary η, trained the way this algorithm trains it.

        A frozen estimator (φ in Algorithms 2 and 3, η in Algorithm 3) is a raw-image classifier: its references train
        on the raw population (shared by every checkpoint) and are queried on its release. A learned one starts on raw
        images and then trains on the release: its references train on the released population (per checkpoint).
        """
        cfg, checkpoint_dir = self.cfg, self.checkpoint_dir
        assert checkpoint_dir is not None  # the farm restores its mechanisms from a checkpoint
        classes, labels = (self.u_classes, population.u) if role == "utility" else (self.s_classes, population.s)
        frozen = (role == "utility" and cfg.algorithm != 1) or (role == "adversary" and cfg.algorithm == 3)
        pretrain = max(cfg.pretrain_epochs, 1)
        if frozen:
            return classifier_reference(classes, pretrain, cfg, self.shape, population.x, labels, released_pop,
                                        reference_cache_dir(checkpoint_dir, per_checkpoint=False))
        return classifier_reference(classes, pretrain + self.epoch * cfg.estimator_steps, cfg, self.shape,
                                    released_pop, labels, None, reference_cache_dir(checkpoint_dir, per_checkpoint=True))
