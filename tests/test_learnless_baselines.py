"""The baselines that learn nothing beside noise: the stroke redraw on hand-made strokes (the width it draws, the PSNR
of a known case), the digit prototype against the class means, both restored from their checkpoints by the farm and
by serving, and the amnist presets running every baseline beside their grids."""
from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from core.image_quality import psnr
from platform.plan.comparison_grid import comparison_grid_spec, comparison_grids
from platform.plan.spec import resolve
from platform.results import tracking
from platform.results.comparison_grid import ComparisonGrid
from platform.run.launch import run_order
from search_spaces import presets
from trainables.prototype.mechanism import (
    MIN_CELL,
    DigitPrototypeBaseline,
    class_means,
    pose_cells,
    pose_features,
    pose_means,
)
from trainables.shared.tune_loop import write_checkpoint
from trainables.stroke_redraw.mechanism import StrokeRedrawBaseline, disk, redraw

SMOKE = {"n_train": 512, "n_test": 256, "attack_epochs": 1}


def line(thickness: int) -> np.ndarray:
    """One 28×28 image: a horizontal stroke 21 pixels long and ``thickness`` pixels thick, centred on row 13."""
    image = np.zeros((1, 28, 28), dtype=np.float32)
    top = 13 - thickness // 2
    image[0, top:top + thickness, 4:25] = 1.0
    return image


def test_the_pen_is_a_disk_of_the_requested_radius() -> None:
    assert disk(0).sum() == 1 and disk(1).sum() == 5 and disk(1.5).sum() == 9 and disk(2).sum() == 13
    np.testing.assert_array_equal(disk(1), [[0, 1, 0], [1, 1, 1], [0, 1, 0]])


@pytest.mark.parametrize("radius", [0, 1, 2])
def test_a_thick_and_a_thin_stroke_come_out_at_the_same_requested_width(radius: int) -> None:
    widths = {}
    for thickness in (3, 7):
        drawn = redraw(line(thickness), threshold=0.5, radius=radius, blur=0.0)[0]
        columns = drawn[:, 8:19].sum(axis=0)  # away from the stroke's ends
        assert np.median(columns) == 2 * radius + 1, (thickness, columns)
        widths[thickness] = float(np.median(columns))
    assert widths[3] == widths[7]  # the thickness is gone


def test_the_psnr_of_a_redrawn_stroke_is_its_share_of_changed_pixels() -> None:
    raw = line(7)  # 7 × 21 = 147 ink pixels
    drawn = redraw(raw, threshold=0.5, radius=1, blur=0.0)
    assert not (drawn > 0)[raw == 0].any()  # the redrawn stroke lies inside the original
    changed = 147 - int(drawn.sum())  # every other ink pixel went from 1 to 0
    expected = 10 * math.log10(28 * 28 / changed)  # PSNR = 10·log10(1 / MSE), MSE = changed / 784
    assert psnr(torch.from_numpy(drawn).unsqueeze(1), torch.from_numpy(raw).unsqueeze(1)) == pytest.approx(expected, abs=1e-4)
    blurred = redraw(raw, threshold=0.5, radius=1, blur=0.5)
    assert blurred.min() >= 0.0 and blurred.max() <= 1.0 and blurred.sum() == pytest.approx(drawn.sum(), rel=1e-3)


def test_the_stroke_redraw_refuses_colour_images() -> None:
    with pytest.raises(ValueError, match="the stroke redraw needs grayscale images; dataset 'cifar10' has 3 channels"):
        StrokeRedrawBaseline.data_counts({"dataset": "cifar10", **SMOKE})


def test_class_means_are_each_classs_mean_image_and_need_every_class() -> None:
    x = torch.arange(4 * 2, dtype=torch.float32).view(4, 1, 1, 2)  # [[0, 1]], [[2, 3]], [[4, 5]], [[6, 7]]
    means = class_means(x, torch.tensor([1, 0, 1, 0]), 2)
    np.testing.assert_allclose(means.view(2, 2).numpy(), [[4.0, 5.0], [2.0, 3.0]])
    with pytest.raises(ValueError, match=r"needs an image of every class; none of class \[2\]"):
        class_means(x, torch.tensor([1, 0, 1, 0]), 3)


def test_the_prototype_release_of_a_correctly_classified_image_is_its_class_mean() -> None:
    config = SMOKE | {"attack_epochs": 4}
    prototype = DigitPrototypeBaseline.create({"mix": 0.0, **config})
    prototype.setup()
    prototype.pretrain()
    records, test = prototype.attack_train, prototype.test
    predicted = prototype.net.classifier(test.x).argmax(1)
    right = predicted == test.u
    assert right.float().mean() > 0.7  # a classifier of the digit (chance: 0.1)
    released = prototype.net(test.x, prototype.gen).detach()
    for digit in range(10):
        mean = records.x[records.u == digit].mean(0)
        mine = released[right & (test.u == digit)]
        torch.testing.assert_close(mine, mean.expand_as(mine))
    wrong = ~right
    if wrong.any():  # a misread digit gets the mean of the class it was read as
        torch.testing.assert_close(released[wrong], prototype.net.prototypes[predicted[wrong], 0])

    mixed = DigitPrototypeBaseline.create({"mix": 0.3, **config})
    mixed.setup()
    mixed.pretrain()  # the same classifier, read from the store by its data's content
    torch.testing.assert_close(mixed.net(test.x, mixed.gen), 0.7 * released + 0.3 * test.x)

    # the per-record mix (preset prototype-mix): each record as it is or as its prototype, never a blend, about half
    # of them verbatim, and which ones drawn from the generator alone (the same draw for other images: not from S)
    half = DigitPrototypeBaseline.create({"mix": 0.0, "verbatim": 0.5, **config})
    half.setup()
    half.pretrain()
    out = half.net(test.x, torch.Generator().manual_seed(7)).detach()
    kept = (out == test.x).flatten(1).all(1)
    assert ((out == released).flatten(1).all(1) | kept).all()
    assert abs(kept.float().mean().item() - 0.5) < 3 * math.sqrt(0.25 / len(kept))
    again = half.net(test.x.flip(0), torch.Generator().manual_seed(7)).detach()
    assert torch.equal((again == test.x.flip(0)).flatten(1).all(1), kept)


@pytest.mark.parametrize(("mechanism", "config"), [(StrokeRedrawBaseline, {"radius": 1.5}),
                                                   (DigitPrototypeBaseline, {"mix": 0.2}),
                                                   (DigitPrototypeBaseline, {"mix": 0.0, "pose_bins": 2})])
def test_the_farm_and_serving_restore_the_release_the_trial_scored(mechanism, config) -> None:
    trial = mechanism.create({**config, **SMOKE})
    trial.setup()
    trial.pretrain()  # the prototype's classifier and class means; nothing for the redraw
    trial.release_test()
    with tempfile.TemporaryDirectory() as folder:
        write_checkpoint(trial, Path(folder))
        farm = mechanism.checkpoint_inputs({**config, **SMOKE}, folder)
        torch.testing.assert_close(farm.data.test_x, trial.released_test)
        assert farm.targets == ()  # no trained network for the membership attackers
        served = mechanism.load_release({**config, **SMOKE}, folder).release(trial.test.x[:8], seed=0)
        torch.testing.assert_close(served, trial.released_test[:8])


def test_the_amnist_presets_run_all_three_baselines_on_their_data() -> None:
    for name in ("amnist", "amnist-privatizer"):
        assert presets()[name].comparison_grids == ("noise", "stroke-redraw", "digit-prototype")
    # the quick profile's grids in full; beside the default (fast) profile, the σ that bracket its front and one pen
    for profile, sizes in (("quick", {"noise": 6, "stroke-redraw": 2, "digit-prototype": 1}),
                           ("fast", {"noise": 4, "stroke-redraw": 1, "digit-prototype": 1})):
        spec = resolve("amnist", profile, [])
        grids = {b.name: comparison_grid_spec(spec, b) for b in ComparisonGrid.all(spec.preset)}
        assert {k: len(g.grid_points()) for k, g in grids.items()} == sizes
        for grid in grids.values():  # the releaser's quick data and attacker budget
            assert {k: grid.config[k] for k in ("n_train", "n_test", "attack_records", "attack_epochs",
                                                "attack_patience")} == {
                "n_train": 2000, "n_test": 1000, "attack_records": 5000, "attack_epochs": 48, "attack_patience": 8}
    assert presets()["amnist"].default_profile == "fast"
    assert resolve("amnist", "fast", []).config == resolve("amnist", "quick", []).config  # fewer points, not less work each


def test_a_sweep_recorded_with_the_noise_grid_alone_resumes_with_it_alone() -> None:
    spec = resolve("amnist", "smoke", [])
    logged = {"profile": "smoke", "grid": spec.grid_param, "config": spec.config}
    params = {k: str(v) for k, v in tracking.flatten("", logged).items()}
    grids = ComparisonGrid.all(spec.preset)
    assert [g.preset.name for g in comparison_grids(spec, params | {"noise_baseline": "True"}, grids)] == ["noise"]
    every = {f"{n}_baseline": "True" for n in ("noise", "stroke-redraw", "digit-prototype")}
    assert [g.preset.name for g in comparison_grids(spec, params | every, grids)] == ["noise", "stroke-redraw", "digit-prototype"]
    assert comparison_grids(spec, params | dict.fromkeys(every, "False"), grids) == ()


# The three comparison grids run end to end beside the smoke grid, stopped and resumed on the way:
# test_interrupts's test_a_stop_at_each_later_phase_ends_the_sweep_within_seconds_and_resume_finishes_it.


def test_beside_the_learning_curves_the_one_trial_grids_run_first_and_results_keep_the_declared_order() -> None:
    # the fast profile's grids: noise 4 trials, the stroke redraw 1, the digit prototype 1; the curves hold a slot
    spec = resolve("amnist", "fast", [])
    grids = tuple(comparison_grid_spec(spec, b) for b in ComparisonGrid.all(spec.preset))
    assert [g.preset.name for g in grids] == ["noise", "stroke-redraw", "digit-prototype"]
    assert run_order(grids, beside_curves=True) == [1, 2, 0]
    assert run_order(grids, beside_curves=False) == [0, 1, 2]  # no curves (the smoke profile): as declared


def test_the_pose_of_hand_made_images():
    image = torch.zeros(3, 1, 28, 28)
    image[0, 0, 5, 20] = 1.0  # one dot: its centroid, no slant, no width
    for r in range(8, 20):  # a stroke leaning right as it goes down: the column grows by one a row
        image[1, 0, r, r] = 1.0
    image[2, 0, 10:18, 4:24] = 1.0  # a wide block: columns 4-23, the standard deviation of 20 evenly spread columns
    row, col, slant, width = pose_features(image).T
    assert (row[0], col[0], slant[0], width[0]) == (5.0, 20.0, 0.0, 0.0)
    assert slant[1] == pytest.approx(1.0) and row[1] == pytest.approx(13.5) and col[1] == pytest.approx(13.5)
    assert width[2] == pytest.approx(math.sqrt((20 ** 2 - 1) / 12)) and slant[2] == pytest.approx(0.0, abs=1e-6)
    # the cells: bins read in base ``bins``, the first feature most significant
    edges = torch.tensor([[[10.0], [10.0], [0.0], [3.0]]]).expand(2, 4, 1)
    assert pose_cells(torch.tensor([[5.0, 20.0, 1.0, 1.0], [12.0, 5.0, -1.0, 4.0]]), edges).tolist() == [
        0 * 8 + 1 * 4 + 1 * 2 + 0, 1 * 8 + 0 * 4 + 0 * 2 + 1]


def test_each_pose_cell_releases_the_mean_of_its_training_records():
    torch.manual_seed(0)
    x = torch.rand(400, 1, 28, 28)
    labels = torch.arange(400) % 2
    edges, means = pose_means(x, labels, classes=2, bins=2)
    assert edges.shape == (2, 4, 1) and means.shape == (2, 16, 1, 28, 28)
    cells = pose_cells(pose_features(x), edges[labels])
    for digit in range(2):
        for cell in range(16):
            mine = (labels == digit) & (cells == cell)
            expected = x[mine].mean(0) if mine.sum() >= MIN_CELL else x[labels == digit].mean(0)
            torch.testing.assert_close(means[digit, cell], expected)
    # each feature's edge is the digit's median: half of its records on each side
    features = pose_features(x[labels == 0])
    assert ((features > edges[0, :, 0]).float().mean(0) - 0.5).abs().max() <= 1 / 200


def test_zero_pose_bins_is_the_digit_prototype_and_bins_bring_detail_back() -> None:
    config = SMOKE | {"attack_epochs": 4}
    digit = DigitPrototypeBaseline.create({"mix": 0.0, **config})
    digit.setup()
    digit.pretrain()
    posed = DigitPrototypeBaseline.create({"mix": 0.0, "pose_bins": 2, **config})
    posed.setup()
    posed.pretrain()  # the same classifier, read from the store by its data's content
    x = digit.test.x
    plain, cells = digit.net(x, digit.gen).detach(), posed.net(x, posed.gen).detach()
    torch.testing.assert_close(plain, class_means(digit.attack_train.x, digit.attack_train.u, 10)[
        digit.net.classifier(x).argmax(1)])
    assert psnr(cells, x) > psnr(plain, x)  # the pose's cell mean lies nearer the image than the digit's
