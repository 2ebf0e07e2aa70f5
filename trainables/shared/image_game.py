"""What the image mechanisms with a game share (the releaser and the privatizer): a releasing network trained against
players on its release, the players' shared pretraining, and the membership targets and reference models of the
networks the game trains (:class:`ImageGame`, over :class:`~trainables.shared.image_release.ImageRelease`).
"""
from __future__ import annotations

from abc import abstractmethod
from functools import partial
from typing import Any, ClassVar, Literal

import torch
from torch import nn
from torch.nn import functional as F

from attacks.base import Canaries, Deferred, MembershipTarget, ReferenceData
from core.nets import game_classifier
from core.reference_models import ClassifierRecipe
from core.training import batches
from trainables.shared.image_release import ImageRelease, Released
from trainables.shared.pretrain_cache import PRETRAIN_DIR, PRETRAINED, pretrain_key, rng_state, set_rng_state


def classifier_reference(classes: int, epochs: int, cfg: Any, shape: tuple[int, ...], train_x: torch.Tensor | Deferred,
                         labels: torch.Tensor, query_x: torch.Tensor | Deferred | None, cache_dir: str,
                         input_norm: bool = False) -> ReferenceData | None:
    """Reference data for a trial's classifier: a ``SmallCNN(classes, width)`` of the images' shape (behind an input
    norm when ``input_norm``, as the trial's players are) trained ``epochs`` epochs with the trial's batch size and
    learning rate; None when the trial trains on the whole set (no population). ``shape``: an image's (C, H, W)."""
    if len(labels) < 2:
        return None
    channels, height, width = shape
    net = partial(game_classifier, classes, cfg.width, (channels, height, width), input_norm)
    recipe = ClassifierRecipe(net, max(epochs, 1), cfg.batch_size, cfg.lr)
    return ReferenceData(recipe, train_x, labels, query_x, cache_dir=cache_dir)


class ImageGame(ImageRelease):
    """A game on an image data set whose releasing network maps images to images, Y = net(X, Z), against players
    trained on its release: their shared pretraining, and the networks the farm's membership attacks target."""
    game_knobs: ClassVar[frozenset[str]] = frozenset()  # config keys its pretraining never reads (λ, α, ...)
    game_state: ClassVar[frozenset[str]] = frozenset()  # keys of state() pretraining leaves as the config set them
    pretrain_dir: str | None = PRETRAIN_DIR  # where shared pretrained states are stored (None: each trial computes its own)

    def pretrain_autoencoder(self, opt: torch.optim.Optimizer) -> None:
        """The releasing network as an autoencoder (Y ≈ X) for ``pretrain_epochs``.

        It is fitted with pixel-wise binary cross-entropy: on sparse MNIST strokes plain MSE through a sigmoid
        collapses to an all-black image, a flat local minimum the game cannot leave.
        """
        train = self.train
        for _ in range(self.cfg.pretrain_epochs):
            for idx in batches(len(train), self.cfg.batch_size, self.gen, train.x.device):
                loss = F.binary_cross_entropy(self.net(train.x[idx], self.gen), train.x[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()

    def pretrain(self) -> None:
        """:meth:`compute_pretrain` once per (data, seed, recipe), shared by every trial of a grid: the state it leaves
        (:meth:`state` and the generators) is read from :attr:`pretrain_dir` when a trial already stored it, else
        computed and stored there (:mod:`trainables.shared.pretrain_cache`). Logs ``pretrain/cached``: 1 when read, 0
        when computed."""
        if self.pretrain_dir is None:
            self.compute_pretrain()
            return
        key = pretrain_key(self.name, self.cfg.as_dict(), self.game_knobs, (self.train.x, self.train.s, self.train.u),
                             self.device)

        def computed() -> dict:
            self.compute_pretrain()
            return self.pretrained_state()

        state, cached = PRETRAINED.stored_or_computed(self.pretrain_dir, key, computed)
        if cached:
            self.load_state(state["models"])
            set_rng_state(self.gen, state["rng"])
        self.pretrain_metrics = {"pretrain/cached": float(cached)}

    @abstractmethod
    def compute_pretrain(self) -> None:
        """The players before the game (the releasing network as an autoencoder, the others on raw images)."""

    def pretrained_state(self) -> dict:
        """What pretraining leaves behind: the networks and optimisers (:meth:`state`) and the generators' states."""
        models = {k: v for k, v in self.state().items() if k not in self.game_state}
        return {"models": models, "rng": rng_state(self.gen)}

    def membership_target(self, name: str, model: nn.Module, released: Released, task: Literal["s", "u"],
                          reference: ReferenceData | None) -> MembershipTarget:
        """A network the game trained on its split's ``task`` labels as the farm's membership target: its ordinary
        training records as released against the released test split, its canaries (if any) apart."""
        labels, ordinary = getattr(self.train, task), len(released.members_x)
        canaries = Canaries(released.canary_members_x, labels[ordinary:], released.canary_nonmembers_x,
                            getattr(self.planted.nonmembers, task)) if len(released.canary_nonmembers_x) else None
        return MembershipTarget(name, model, released.members_x, labels[:ordinary], released.data.test_x,
                                getattr(self.test, task), reference, canaries)
