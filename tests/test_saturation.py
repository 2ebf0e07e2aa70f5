"""The saturation fit (core/saturation.py): a power law a − b·n^(−c) with a bootstrap interval for a."""
import numpy as np
import pytest

from core.saturation import Z95, fit_power_law, grid_fit, power_law, saturation

RECORDS = [1250, 2500, 5000, 10000]


def test_noise_free_points_give_the_exact_parameters() -> None:
    """Points on a known law (c off the grid's steps, so the polish must reach it): the exact a, b, c and a zero-width
    interval at a. A fit that ignored c, or stopped at the grid's nearest c, misses at 1e-9."""
    n = np.asarray(RECORDS, float)
    y = power_law(n, 0.93, 2.7, 0.437)
    assert fit_power_law(n, y) == pytest.approx([0.93, 2.7, 0.437], abs=1e-9)
    found = saturation(RECORDS, y, [0.0] * 4)
    assert found.estimate == pytest.approx(0.93, abs=1e-9) and found.ci_low == found.ci_high == found.estimate


def test_a_rising_curve_s_asymptote_lies_in_its_interval() -> None:
    """A curve 0.95 − 3·n^(−0.5) measured with noise (95 % half-width 0.01), 40 draws: the true asymptote inside the
    interval in at least 36 (a 95 % interval; an interval on the last point alone, 0.92 ± 0.01, never holds it), and the
    estimate above the last measured point on average (a curve still rising is heading higher)."""
    rng = np.random.default_rng(7)
    truth, half = 0.95, 0.01
    clean = power_law(np.asarray(RECORDS, float), truth, 3.0, 0.5)
    found = [saturation(RECORDS, clean + rng.normal(0, half / Z95, 4), [half] * 4, seed=i) for i in range(40)]
    assert all(f.estimate is not None for f in found)
    assert sum(f.ci_low <= truth <= f.ci_high for f in found) >= 36  # type: ignore[operator]
    assert np.mean([f.estimate for f in found]) > clean[-1] + 0.01


def test_a_flat_curve_gives_a_tight_interval_around_its_value() -> None:
    """Four points at 0.80 ± 0.01: the estimate 0.80 and an interval within 0.03 of it on either side, holding it."""
    found = saturation(RECORDS, [0.8] * 4, [0.01] * 4)
    assert found.estimate == pytest.approx(0.8, abs=1e-6)
    assert found.ci_low <= 0.8 <= found.ci_high  # type: ignore[operator]
    assert found.ci_high - found.ci_low < 0.03  # type: ignore[operator]


def test_the_estimate_is_capped_at_one_and_floored_at_the_last_point_less_its_noise() -> None:
    """A steep curve heading past 1 reads 1 at most; a falling curve never reads below its last point less its noise."""
    steep = saturation(RECORDS, [0.6, 0.8, 0.9, 0.97], [0.005] * 4)
    assert steep.estimate == 1.0 and steep.ci_high == 1.0
    falling = saturation(RECORDS, [0.9, 0.85, 0.8, 0.75], [0.01] * 4)
    assert falling.estimate is not None and falling.estimate >= 0.74 and falling.ci_low >= 0.74  # type: ignore[operator]


@pytest.mark.parametrize(("records", "accuracy", "half", "why"), [
    ([2500, 5000], [0.8, 0.85], [0.01, 0.01], "2 distinct record counts"),
    ([5000, 5000, 5000], [0.8, 0.81, 0.82], [0.01] * 3, "1 distinct record counts"),
    (RECORDS, [0.8, float("nan"), 0.85, 0.86], [0.01] * 4, "not a usable number"),
])
def test_too_few_points_or_unusable_ones_give_no_estimate(records: list, accuracy: list, half: list, why: str) -> None:
    """No estimate, never a made-up number, and the reason said."""
    found = saturation(records, accuracy, half)
    assert found.estimate is None and found.ci_low is None and why in found.reason and found.logged("x") == {}


def test_the_grid_fit_solves_each_row_in_closed_form() -> None:
    """Rows on laws whose c lies on the grid: their exact (a, b, c), all rows at once, as the bootstrap uses it."""
    n = np.asarray(RECORDS, float)
    laws = [(0.9, 2.0, 0.5), (0.7, 0.0, 1.0), (0.85, 10.0, 1.25)]
    ys = np.stack([power_law(n, *law) for law in laws])
    fitted = grid_fit(n, ys, np.ones(4))
    assert fitted[[0, 2]] == pytest.approx(np.asarray([laws[0], laws[2]]), abs=1e-9)
    assert fitted[1, :2] == pytest.approx([0.7, 0.0], abs=1e-12)  # a flat row: b = 0, any c
