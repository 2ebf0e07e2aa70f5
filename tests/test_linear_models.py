"""The membership experiments' linear models: closed-form ridge against numpy's least squares, logistic at its optimum,
stacks of training sets fitted as one, output noise and the two-class view the likelihood attacks read."""
from __future__ import annotations

import numpy as np
import pytest

from core import linear_models as lm


@pytest.fixture(scope="module")
def problem() -> tuple[np.ndarray, np.ndarray]:
    """200 rows, 3 features, 0/1 labels from a noisy linear rule."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    return x, (x @ np.array([1.5, -1.0, 0.5]) + rng.logistic(size=200) > 0).astype(float)


@pytest.mark.parametrize("lam", [0.0, 0.01, 3.0])
def test_ridge_equals_numpy_least_squares_on_the_augmented_system(problem, lam: float) -> None:
    # mean squared error + λ‖w‖² (bias free) = (1/n)·‖[D; √(nλ)·I'] θ − [y; 0]‖²: numpy's lstsq solves it directly.
    x, y = problem
    n, p = x.shape[0], x.shape[1] + 1
    penalty = np.sqrt(n * lam) * np.eye(p)[:-1]
    stacked = np.vstack([np.hstack([x, np.ones((n, 1))]), penalty])
    expected = np.linalg.lstsq(stacked, np.concatenate([y, np.zeros(p - 1)]), rcond=None)[0]
    np.testing.assert_allclose(lm.fit_ridge(x, y, lam), expected, rtol=1e-10, atol=1e-12)


def test_logistic_reaches_the_regularised_optimum(problem) -> None:
    x, y = problem
    theta = lm.fit_logistic(x, y, lam=0.1, steps=2000)
    z = lm.scores(theta, x)
    grad_w = x.T @ (1 / (1 + np.exp(-z)) - y) / len(x) + 0.1 * theta[:-1]
    grad_b = np.mean(1 / (1 + np.exp(-z)) - y)
    assert np.abs(grad_w).max() < 1e-6 and abs(grad_b) < 1e-6


@pytest.mark.parametrize("model", lm.MODELS)
def test_a_stack_of_training_sets_fits_each_set_alone(problem, model: str) -> None:
    x, y = problem
    sets = np.stack([np.arange(0, 50), np.arange(50, 100), np.arange(100, 150)])
    stacked = lm.fit(model, x[sets], y[sets], 0.01, 0.0, np.random.default_rng(0), 100)
    for row, index in zip(stacked, sets, strict=True):
        np.testing.assert_allclose(row, lm.fit(model, x[index], y[index], 0.01, 0.0, np.random.default_rng(0), 100),
                                   rtol=1e-9, atol=1e-12)


def test_output_noise_is_sigma_on_every_parameter(problem) -> None:
    x, y = problem
    clean = lm.fit_ridge(x, y, 0.01)
    noisy = lm.fit("linear", np.broadcast_to(x, (4000, *x.shape)), np.broadcast_to(y, (4000, len(y))), 0.01, 0.3,
                   np.random.default_rng(0), 1)
    np.testing.assert_allclose(noisy.mean(0), clean, atol=0.02)
    np.testing.assert_allclose(noisy.std(0), 0.3, rtol=0.05)
    with pytest.raises(ValueError, match="model must be one of linear, logistic"):
        lm.fit("tree", x, y, 0.01, 0.0, np.random.default_rng(0), 1)


def test_losses_predictions_and_the_two_class_view(problem) -> None:
    x, y = problem
    theta = lm.fit_ridge(x, y, 0.01)
    s = lm.scores(theta, x)
    np.testing.assert_allclose(lm.losses("linear", theta, x, y), 0.5 * (y - s) ** 2)
    np.testing.assert_array_equal(lm.predict("linear", theta, x), (s > 0.5).astype(int))
    # The Gaussian-likelihood reading p(y) ∝ exp(−(y − s)²): class-1 logit −(1 − s)² + s² = 2s − 1.
    logit = lm.scores(lm.two_class_logit("linear", theta), x)
    np.testing.assert_allclose(logit, (-(1 - s) ** 2) - (-(0 - s) ** 2))
    np.testing.assert_array_equal(lm.two_class_logit("logistic", theta), theta)
    np.testing.assert_allclose(lm.losses("logistic", theta, x, y), np.logaddexp(0, -(2 * y - 1) * s))
