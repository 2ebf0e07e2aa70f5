"""The digit prototype baseline: a digit classifier trained on raw images predicts each image's class, and the release
is that class's mean training image (with a share ``mix`` of the raw image mixed back in); nothing learned from the
release (docs/mechanisms.md#digit-prototype-baseline). With ``pose_bins`` > 0 it is the pose prototype: the mean of the
training records that share the digit and the image's coarse pose (its centroid, slant and width, each binned by the
digit's quantiles), a diagnostic of how much distortion features that carry little of the secret can buy.

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

from core.classifier import TunedClassifier, image_cnn
from core.config import AttackBudget
from core.data import Split
from core.nets import Standardized
from trainables.prototype.config import DigitPrototypeConfig
from trainables.shared.image_release import FixedRelease

POSE = ("centroid_row", "centroid_col", "slant", "width")  # the coarse pose of an image, in pixels
MIN_CELL = 5  # a pose cell with fewer training records than this releases its digit's mean instead


def class_means(x: torch.Tensor, labels: torch.Tensor, classes: int) -> torch.Tensor:
    """The mean image of each class [classes, *image shape]; a one-line ValueError when a class has no image."""
    counts = torch.bincount(labels, minlength=classes)
    if (counts == 0).any():
        missing = [int(c) for c in torch.nonzero(counts == 0).flatten()]
        raise ValueError(f"the digit prototype needs an image of every class; none of class {missing}")
    sums = torch.zeros((classes, *x.shape[1:]), dtype=x.dtype, device=x.device).index_add_(0, labels, x)
    return sums / counts.to(x.dtype).view(-1, *[1] * (x.dim() - 1))


def pose_features(x: torch.Tensor) -> torch.Tensor:
    """The coarse pose of each image [N, C, H, W] as [N, 4] (:data:`POSE`): the intensity-weighted centroid's row and
    column, the slant (the column's shift per row below the centroid) and the width (the columns' standard deviation);
    a blank image reads 0 on each."""
    w = x.clamp(min=0).sum(1)  # [N, H, W]
    rows = torch.arange(w.shape[1], dtype=w.dtype, device=w.device).view(1, -1, 1)
    cols = torch.arange(w.shape[2], dtype=w.dtype, device=w.device).view(1, 1, -1)
    mass = w.sum((1, 2)).clamp(min=1e-12)
    row = (w * rows).sum((1, 2)) / mass
    col = (w * cols).sum((1, 2)) / mass
    dr, dc = rows - row.view(-1, 1, 1), cols - col.view(-1, 1, 1)
    slant = (w * dr * dc).sum((1, 2)) / (w * dr * dr).sum((1, 2)).clamp(min=1e-12)
    width = ((w * dc * dc).sum((1, 2)) / mass).sqrt()
    return torch.stack([row, col, slant, width], dim=1)


def pose_cells(features: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    """Each record's pose cell from its features [N, F] and its digit's bin edges [N, F, bins − 1]: the bins read as
    one number in base ``bins``, the first feature most significant."""
    bins = edges.shape[2] + 1
    index = (features.unsqueeze(2) > edges).sum(2)  # [N, F]
    weights = bins ** torch.arange(features.shape[1] - 1, -1, -1, device=features.device)
    return (index * weights).sum(1)


def pose_means(x: torch.Tensor, labels: torch.Tensor, classes: int, bins: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per digit, the pose bins' edges (the quantiles of its records' features) [classes, 4, bins − 1] and the mean image
    of each pose cell [classes, bins⁴, *image]; a cell of fewer than :data:`MIN_CELL` records takes its digit's mean."""
    features, digit = pose_features(x), class_means(x, labels, classes)
    quantiles = torch.linspace(0, 1, bins + 1, dtype=x.dtype, device=x.device)[1:-1]
    edges = torch.stack([torch.quantile(features[labels == c], quantiles, dim=0).T for c in range(classes)])
    cells = pose_cells(features, edges[labels])
    means = digit.unsqueeze(1).repeat(1, bins ** len(POSE), *[1] * (x.dim() - 1))
    for c in range(classes):
        mine = labels == c
        counts = torch.bincount(cells[mine], minlength=bins ** len(POSE))
        full = counts >= MIN_CELL
        sums = torch.zeros_like(means[c]).index_add_(0, cells[mine], x[mine])
        means[c][full] = sums[full] / counts[full].to(x.dtype).view(-1, *[1] * (x.dim() - 1))
    return edges, means


class DigitPrototype(nn.Module):
    """Y = (1 − t)·prototypes[argmax classifier(X), cell(X)] + t·X: a fixed classifier (of the tuned family at
    ``width``), one prototype image per class and pose cell (one cell where ``edges`` has no bins); with ``verbatim`` =
    q > 0 each record is released as X itself with probability q."""

    prototypes: torch.Tensor  # buffers, registered in __init__
    edges: torch.Tensor

    def __init__(self, classifier: nn.Module, width: int, prototypes: torch.Tensor, mix: float,
                 verbatim: float = 0.0, edges: torch.Tensor | None = None) -> None:
        super().__init__()
        self.classifier = classifier
        self.width = width
        self.register_buffer("prototypes", prototypes if edges is not None else prototypes.unsqueeze(1))
        self.register_buffer("edges", edges if edges is not None else torch.zeros(len(prototypes), 0, 0))
        self.mix = nn.Parameter(torch.tensor(float(mix)), requires_grad=False)  # saved with the checkpoint
        self.verbatim = nn.Parameter(torch.tensor(float(verbatim)), requires_grad=False)

    def forward(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The release; ``generator`` draws which records go out verbatim (none when ``verbatim`` is 0)."""
        classes = self.classifier(x).argmax(1)
        cells = pose_cells(pose_features(x), self.edges[classes]) if self.edges.shape[1] else torch.zeros_like(classes)
        prototype = (1 - self.mix) * self.prototypes[classes, cells] + self.mix * x
        if self.verbatim.item() == 0:
            return prototype
        kept = torch.rand(len(x), generator=generator, device=x.device) < self.verbatim
        return torch.where(kept.view(-1, *[1] * (x.dim() - 1)), x, prototype)


def fit_prototype(budget: AttackBudget, records: Split, classes: int, mix: float = 0.0, verbatim: float = 0.0,
                  bins: int = 0) -> DigitPrototype:
    """The digit prototype (the pose prototype with ``bins``) of ``records``: the tuned classifier of their labels U
    fitted on their raw images (read from the store when a sweep already fitted it) and their class (or pose cell)
    means."""
    fit = TunedClassifier(budget, store=True).fit(records.x, records.u, classes)
    edges, means = (pose_means(records.x, records.u, classes, bins) if bins
                    else (None, class_means(records.x, records.u, classes)))
    return DigitPrototype(fit.model.eval(), fit.candidate.width, means, mix, verbatim, edges)


def restored_prototype(stored: dict, width: int, shape: tuple[int, int, int], classes: int) -> DigitPrototype:
    """The digit prototype whose state dict is ``stored`` (its classifier fitted at ``width``, on images of ``shape``),
    from checkpoints written before the per-record mix and the pose cells too."""
    stored = dict(stored)
    stored.setdefault("verbatim", torch.tensor(0.0))  # checkpoints from before the per-record mix
    if stored["prototypes"].dim() == len(shape) + 1:  # checkpoints from before the pose cells: one a digit
        stored["prototypes"] = stored["prototypes"].unsqueeze(1)
    stored.setdefault("edges", torch.zeros(classes, 0, 0))
    batch = (1, *shape)
    classifier = Standardized(image_cnn(torch.zeros(batch))(classes, width), torch.zeros(batch), torch.ones(batch))
    prototype = DigitPrototype(classifier, width, torch.zeros_like(stored["prototypes"]), 0.0, 0.0,
                               torch.zeros_like(stored["edges"]))
    prototype.load_state_dict(stored)
    return prototype


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
        cfg = self.cfg
        self.prototype = fit_prototype(cfg, self.attack_train, self.u_classes, cfg.mix, cfg.verbatim,
                                       cfg.pose_bins).to(self.device)

    def state(self) -> dict:
        return {"width": self.net.width, "prototype": self.net.state_dict()}

    def load_state(self, state: dict) -> None:
        prototype = restored_prototype(state["prototype"], int(state["width"]), self.shape, self.u_classes)
        for knob in ("mix", "verbatim"):
            held, asked = getattr(prototype, knob).item(), getattr(self.cfg, knob)
            if abs(held - asked) > 1e-6:
                raise ValueError(f"the checkpoint holds {knob} = {held:g}, the config {knob} = {asked:g}")
        self.prototype = prototype.eval().to(self.device)

    def figure_title(self, epoch: int) -> str:
        verbatim = f", {self.cfg.verbatim:g} verbatim" if self.cfg.verbatim else ""
        pose = f", {self.cfg.pose_bins} pose bins" if self.cfg.pose_bins else ""
        return f"digit prototype, mix {self.cfg.mix:g}{verbatim}{pose}"
