"""Information removed as Cloak's paper scores it: a kNN (Kraskov–Stögbauer–Grassberger) Shannon MI estimate between
raw and released images, normalised by the same estimator's value on (raw, raw) (docs/estimators.md#knn-information-removed).

Images are reduced to their top ``dims`` principal components (fitted on the raw training images, applied to raw and
released test images alike, each component standardised on each side): a kNN estimator cannot resolve 1,024
dimensions from a few thousand samples. The normaliser Î(Z; Z) is what the estimator reports for an exact copy, its
ceiling at that sample size (≈ ψ(N) − ψ(k)), the way the paper divides by the estimator's "image with itself".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

KNN_DIMS = 16  # principal components kept: 60 % of MNIST's pixel variance
KNN_NEIGHBOURS = 4  # KSG's k (the estimator's recommended default)


@dataclass(frozen=True)
class PrincipalAxes:
    """Mean and the top principal directions [D, dims] of flattened raw images."""

    mean: torch.Tensor
    components: torch.Tensor

    @classmethod
    def fit(cls, x: torch.Tensor, dims: int = KNN_DIMS) -> PrincipalAxes:
        """The top ``dims`` principal directions of the images ``x`` [N, ...] (float64, on the CPU)."""
        flat = x.detach().flatten(1).double().cpu()
        if not 1 <= dims <= min(flat.shape):
            raise ValueError(f"knn_dims must be in [1, {min(flat.shape)}] for {flat.shape[0]} images of "
                             f"{flat.shape[1]} features (got {dims})")
        mean = flat.mean(0)
        _, _, vt = torch.linalg.svd(flat - mean, full_matrices=False)
        return cls(mean, vt[:dims].T.contiguous())

    def project(self, x: torch.Tensor) -> np.ndarray:
        """Images [N, ...] -> their standardised coordinates [N, dims] on the axes (constant columns stay 0)."""
        z = (x.detach().flatten(1).double().cpu() - self.mean) @ self.components
        z = z - z.mean(0)
        return (z / z.std(0).clamp_min(1e-12)).numpy()


def ksg_mutual_information(a: np.ndarray, b: np.ndarray, k: int = KNN_NEIGHBOURS, seed: int = 0) -> float:
    """KSG (type I, max-norm) estimate of I(A; B) in nats between samples [N, da] and [N, db] (``infomeasure``)."""
    import infomeasure  # imported here: numba's start-up is paid only where the estimate is made

    if a.shape[0] != b.shape[0] or a.shape[0] <= k:
        raise ValueError(f"the kNN estimator needs paired samples, more than k = {k} (got {a.shape[0]} and {b.shape[0]})")
    return float(infomeasure.mutual_information(a, b, approach="ksg", k=k, seed=seed, base="e"))


@dataclass(frozen=True)
class KnnInformation:
    """Î(X; X̃), the normaliser Î(X; X) (nats) and the share removed, 1 − Î(X; X̃)/Î(X; X) clipped to [0, 1]."""

    mi: float
    self_mi: float

    @property
    def removed(self) -> float:
        return min(1.0, max(0.0, 1.0 - self.mi / self.self_mi))


class KnnInfoMeter:
    """Measures the information released images keep about fixed raw images (projected once, self-MI computed once)."""

    def __init__(self, axes: PrincipalAxes, raw: torch.Tensor, k: int = KNN_NEIGHBOURS, seed: int = 0) -> None:
        self.axes, self.k, self.seed = axes, k, seed
        self.raw = axes.project(raw)
        self.self_mi = ksg_mutual_information(self.raw, self.raw, k, seed)

    def __call__(self, released: torch.Tensor) -> KnnInformation:
        """Î(X; X̃) of the release of the meter's raw images (same order), with the share it removed."""
        return KnnInformation(ksg_mutual_information(self.raw, self.axes.project(released), self.k, self.seed),
                              self.self_mi)
