"""How far a released image is from the raw one: the game's squared-error distortion and the PSNR/SSIM a reader
compares releases by (pixels in [0, 1]; PSNR and SSIM from torchmetrics, the reference implementations)."""
from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from core.metric_names import MSE, PSNR, PSNR_OF_MSE, SQUARED_ERROR, SSIM

DATA_RANGE = 1.0  # images live in [0, 1]
# The PSNR of an exact copy is infinite. Each image's PSNR is capped here, above 8-bit quantisation's own
# (uniform rounding error of variance 1/(12·255²): 58.9 dB), so a copy logs a finite value like any other release.
PSNR_MAX = 60.0


def squared_error(released: torch.Tensor, raw: torch.Tensor) -> torch.Tensor:
    """E‖X − Y‖²: each image's squared error summed over its pixels (and channels), averaged over the batch.

    Differentiable: it is the releaser's distortion term as the paper writes it (784× a per-pixel MSE on 28×28 digits).
    """
    return (released - raw).pow(2).flatten(1).sum(1).mean()


def psnr(released: torch.Tensor, raw: torch.Tensor) -> float:
    """Mean over images of each image's PSNR in dB, 10·log10(1 / per-pixel MSE) capped at :data:`PSNR_MAX`, for
    batches [N, C, H, W]."""
    from torchmetrics.functional.image import peak_signal_noise_ratio  # here: importing torchmetrics costs seconds

    per_image = peak_signal_noise_ratio(released.float(), raw.float(), data_range=DATA_RANGE, dim=(1, 2, 3),
                                        reduction="none")
    return float(per_image.clamp(max=PSNR_MAX).mean())


def psnr_of_mse(mse: float) -> float:
    """10·log10(1 / ``mse``) in dB for a per-pixel mean squared error of images in [0, 1], capped at :data:`PSNR_MAX`
    like each image's PSNR (an exact copy, MSE 0, reads the cap)."""
    return PSNR_MAX if mse <= 10 ** (-PSNR_MAX / 10) else min(PSNR_MAX, -10 * math.log10(mse))


def mse_of_psnr(db: float) -> float:
    """The per-pixel mean squared error whose :func:`psnr_of_mse` is ``db`` (what a per-record mix of releases
    averages)."""
    return 10 ** (-db / 10)


def with_psnr_of_mse(metrics: Mapping[str, float]) -> dict[str, float]:
    """``metrics`` with ``utility/psnr_of_mse`` worked out from ``utility/mse`` where a run logged only that (runs
    stored before the PSNR of the MSE was logged)."""
    if PSNR_OF_MSE in metrics or MSE not in metrics or not math.isfinite(metrics[MSE]):
        return dict(metrics)
    return {**metrics, PSNR_OF_MSE: psnr_of_mse(metrics[MSE])}


def ssim(released: torch.Tensor, raw: torch.Tensor) -> float:
    """Mean structural similarity (Wang et al. 2004: 11×11 Gaussian window, σ = 1.5, K1 = 0.01, K2 = 0.03)."""
    from torchmetrics.functional.image import structural_similarity_index_measure

    value = structural_similarity_index_measure(released.float(), raw.float(), data_range=DATA_RANGE)
    assert isinstance(value, torch.Tensor)  # a tuple only when the full SSIM image is asked for
    return float(value)


def distortion(released: torch.Tensor, raw: torch.Tensor) -> dict[str, float]:
    """The release's distortion as logged, on the whole split: ``utility/squared_error`` (E‖X − Y‖², the game's
    distortion term), ``utility/psnr_of_mse`` (dB, the image fronts' distortion axis) and ``utility/psnr`` (dB, the mean
    of per-image PSNRs)."""
    with torch.no_grad():
        per_image = float(squared_error(released, raw))  # summed over an image's pixels, its mean MSE × pixels
        return {SQUARED_ERROR: per_image, PSNR_OF_MSE: psnr_of_mse(per_image / released[0].numel()),
                PSNR: psnr(released, raw)}


def image_quality(released: torch.Tensor, raw: torch.Tensor) -> dict[str, float]:
    """The release's quality against the raw images, as logged: its :func:`distortion`, ``utility/ssim`` and
    ``utility/mean_pixel`` (the release's mean brightness; the raw AMNIST test images average about 0.13)."""
    with torch.no_grad():
        return distortion(released, raw) | {SSIM: ssim(released, raw), "utility/mean_pixel": float(released.mean())}
