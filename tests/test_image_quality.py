"""The releaser's distortion and the image-quality metrics against values computed by hand."""
from __future__ import annotations

import math

import pytest
import torch

from core.image_quality import image_quality, psnr, squared_error, ssim


def test_squared_error_is_each_images_sum_of_squares_averaged_over_the_batch() -> None:
    raw = torch.zeros(2, 1, 28, 28)
    released = raw.clone()
    released[0, 0, 0, :3] = torch.tensor([0.5, 0.5, 1.0])  # image 0: 0.25 + 0.25 + 1
    released[1] = 0.1  # image 1: 784 pixels at 0.01
    by_hand = (1.5 + 784 * 0.01) / 2
    assert squared_error(released, raw).item() == pytest.approx(by_hand, rel=1e-6)
    # 784× the per-pixel mean squared error the distortion used to be
    assert squared_error(released, raw).item() == pytest.approx(784 * torch.mean((released - raw) ** 2).item(), rel=1e-6)


def test_psnr_is_the_mean_of_each_images_psnr() -> None:
    raw = torch.zeros(2, 1, 4, 4)
    released = raw.clone()
    released[0] = 0.1  # MSE 0.01: 20 dB
    released[1, 0, 0, 0] = 1.0  # MSE 1/16: 10·log10(16) dB
    by_hand = (20.0 + 10 * math.log10(16)) / 2
    assert psnr(released, raw) == pytest.approx(by_hand, rel=1e-5)


def test_ssim_of_flat_images_is_the_luminance_term_and_one_for_equal_images() -> None:
    # flat images have no contrast or structure: SSIM = (2ab + C1) / (a² + b² + C1), C1 = (0.01·L)², L = 1
    a, b, c1 = 0.3, 0.6, 0.01**2
    flat_a, flat_b = torch.full((2, 1, 28, 28), a), torch.full((2, 1, 28, 28), b)
    assert ssim(flat_a, flat_b) == pytest.approx((2 * a * b + c1) / (a * a + b * b + c1), abs=1e-3)
    digits = torch.rand(3, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    assert ssim(digits, digits) == pytest.approx(1.0, abs=1e-6)
    assert ssim(digits.flip(-1), digits) < 0.2  # mirrored noise keeps the brightness, not the structure


def test_a_black_release_scores_low_and_its_mean_pixel_is_logged() -> None:
    raw = torch.rand(4, 1, 28, 28, generator=torch.Generator().manual_seed(1))
    black = torch.zeros_like(raw)
    quality = image_quality(black, raw)
    assert quality["utility/mean_pixel"] == 0.0
    assert quality["utility/psnr"] == pytest.approx(psnr(black, raw))
    assert quality["utility/psnr"] < 6  # uniform pixels: MSE 1/3, about 4.8 dB
    # the game's distortion on the whole split: each image's pixels' squares summed, then the mean over the 4 images
    assert quality["utility/squared_error"] == pytest.approx(float((raw**2).sum() / 4), rel=1e-6)
    assert image_quality(raw, raw)["utility/ssim"] == pytest.approx(1.0, abs=1e-6)
