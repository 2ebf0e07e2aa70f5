"""The digit prototype baseline: a digit classifier trained on raw images predicts each image's class, and the release
is that class's mean training image (with a share ``mix`` of the raw image mixed back in); nothing learned from the
release (docs/mechanisms.md#digit-prototype-baseline).

It keeps the digit as well as a raw-data classifier reads it and hides everything else, including the stroke
thickness, at the price of the distortion: its attacker reads what the digit alone says of the thickness (the farm's
imputation attacker). On a front with only utility and privacy axes it is a corner no mechanism could beat; the
distortion axis is what tells it apart.

The classifier is the tuned CNN family fitted on the raw images of the attacker records, as the data user fits its
fresh classifier (not its fixed one, whose input standardisation has another floor), stored by their content: the
noise grid's σ = 0 release is those raw images, so its data user reads this fit back. The class means are taken over
the same records.
"""
from __future__ import annotations

import torch
from torch import nn

from attacks.attackers.deep import DeepAttacker, image_cnn
from core.nets import Standardized
from trainables.prototype.config import DigitPrototypeConfig
from trainables.shared.image_game import FixedRelease

CLASSIFIER = "fixed_utility"  # its name in the fit's log; the fit is stored by content (see above)


def class_means(x: torch.Tensor, labels: torch.Tensor, classes: int) -> torch.Tensor:
    """The mean image of each class [classes, *image shape]; a one-line ValueError when a class has no image."""
    counts = torch.bincount(labels, minlength=classes)
    if (counts == 0).any():
        missing = [int(c) for c in torch.nonzero(counts == 0).flatten()]
        raise ValueError(f"the digit prototype needs an image of every class; none of class {missing}")
    sums = torch.zeros((classes, *x.shape[1:]), dtype=x.dtype, device=x.device).index_add_(0, labels, x)
    return sums / counts.to(x.dtype).view(-1, *[1] * (x.dim() - 1))


class DigitPrototype(nn.Module):
    """Y = (1 − t)·prototypes[argmax classifier(X)] + t·X: a fixed classifier (of the tuned family at ``width``), one
    prototype image per class; with ``verbatim`` = q > 0 each record is released as X itself with probability q."""

    prototypes: torch.Tensor  # buffer, registered in __init__

    def __init__(self, classifier: nn.Module, width: int, prototypes: torch.Tensor, mix: float,
                 verbatim: float = 0.0) -> None:
        super().__init__()
        self.classifier = classifier
        self.width = width
        self.register_buffer("prototypes", prototypes)
        self.mix = nn.Parameter(torch.tensor(float(mix)), requires_grad=False)  # saved with the checkpoint
        self.verbatim = nn.Parameter(torch.tensor(float(verbatim)), requires_grad=False)

    def forward(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The release; ``generator`` draws which records go out verbatim (none when ``verbatim`` is 0)."""
        classes = self.classifier(x).argmax(1)
        prototype = (1 - self.mix) * self.prototypes[classes] + self.mix * x
        if self.verbatim.item() == 0:
            return prototype
        kept = torch.rand(len(x), generator=generator, device=x.device) < self.verbatim
        return torch.where(kept.view(-1, *[1] * (x.dim() - 1)), x, prototype)


class DigitPrototypeBaseline(FixedRelease):
    """Each image of the config's image set released as its predicted class's mean image, scored like the learned image
    mechanisms."""

    name = "digit-prototype"
    config_class = DigitPrototypeConfig
    trainable_name = "train_digit_prototype"
    cfg: DigitPrototypeConfig

    @property
    def net(self) -> DigitPrototype:
        if self.prototype is None:
            raise RuntimeError("the digit prototype is fitted in pretrain() or restored from a checkpoint first")
        return self.prototype

    def build(self) -> None:
        """Nothing to build before the fit (:meth:`pretrain`) or a checkpoint (:meth:`load_state`) says its size."""
        self.prototype: DigitPrototype | None = None

    def pretrain(self) -> None:
        """The classifier of U fitted on the attacker records' raw images (read from the store when the sweep already
        fitted it), and each class's mean image over the same records."""
        records = self.attack_train
        fit = DeepAttacker(self.cfg, CLASSIFIER, store=True).fit(records.x, records.u, self.u_classes)
        self.prototype = DigitPrototype(fit.model.eval(), fit.candidate.width,
                                        class_means(records.x, records.u, self.u_classes), self.cfg.mix,
                                        self.cfg.verbatim).to(self.device)

    def classifier(self, width: int) -> nn.Module:
        """An unfitted classifier of the fit's architecture (the tuned family at ``width``), for a checkpoint to fill."""
        shape = (1, *self.shape)
        return Standardized(image_cnn(torch.zeros(shape))(self.u_classes, width), torch.zeros(shape), torch.ones(shape))

    def state(self) -> dict:
        return {"width": self.net.width, "prototype": self.net.state_dict()}

    def load_state(self, state: dict) -> None:
        width = int(state["width"])
        prototype = DigitPrototype(self.classifier(width), width, torch.zeros((self.u_classes, *self.shape)), self.cfg.mix,
                                   self.cfg.verbatim)
        stored = dict(state["prototype"])
        stored.setdefault("verbatim", torch.tensor(0.0))  # checkpoints from before the per-record mix
        prototype.load_state_dict(stored)
        for knob in ("mix", "verbatim"):
            held, asked = getattr(prototype, knob).item(), getattr(self.cfg, knob)
            if abs(held - asked) > 1e-6:
                raise ValueError(f"the checkpoint holds {knob} = {held:g}, the config {knob} = {asked:g}")
        self.prototype = prototype.eval().to(self.device)

    def figure_title(self, epoch: int) -> str:
        verbatim = f", {self.cfg.verbatim:g} verbatim" if self.cfg.verbatim else ""
        return f"digit prototype, mix {self.cfg.mix:g}{verbatim}"
