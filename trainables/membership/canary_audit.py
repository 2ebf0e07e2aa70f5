"""The one-run ε audit of a DP-SGD point (docs/membership.md#the-empirical-ε-of-dp-sgd).

Steinke, Nasr and Jagielski's audit (attacks.audits.dp_audit) of the point's DP-SGD: m canaries, each in with probability ½,
trained on beside the point's members, then guessed from the trained model; the guesses give an ε lower bound at the
point's δ, to read against the accountant's ε.

**Canaries.** A canary is one input R·(±e_j) on PCA axis j (R = ``CANARY_NORM``, far outside the data: Adult's rows
have a median norm of 2.7 on 40 axes), labelled with the class the point's own model (trained without canaries)
finds the less likely there: a mislabelled record, as the paper suggests. Its gradient lies almost along its own
axis, so a logistic model, which has one weight per axis, can hold one canary per axis without the canaries blurring
each other (the input-space counterpart of the paper's "Dirac" gradient canaries). A run therefore holds at most p_x
canaries on distinct axes, and m canaries take ⌈m / p_x⌉ **audit runs**, each on the members plus that run's included
canaries. A canary changes only its own run, so the runs together are (ε, δ)-DP in each canary whenever each run is,
and the paper's bound applies to all m canaries at once.

**The audited mechanism.** Each audit run is the point's DP-SGD: same clip, steps, step size, penalty and noise
multiplier, and Poisson lots at the point's sample rate 1/lots(n), fixed in advance (dp_sgd.Sampling) so that adding
or removing one canary changes nothing but that canary's record; lots hold (n + canaries / 2) / lots records on
average. The accountant's ε of the point (``leakage/dp/epsilon``) is therefore the ε each run claims. The released
model is not audited itself (it has no canaries): what is audited is the training algorithm and its accounting.

**Guesses.** A canary's score is its label's log-odds under its run's model (higher: more likely in). The k = ⌊share·m
/ 2⌋ highest-scoring canaries are guessed in, the k lowest out, the rest abstained on; k is fixed before training.
"""
from __future__ import annotations

import math

import numpy as np

from attacks.audits.dp_audit import OneRunAudit, guess
from trainables.membership import dp_sgd

CANARY_NORM = 10.0


def canary_inputs(m: int, p_x: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """m canaries R·(±e_j) (m, p_x), p_x per run on distinct axes, and each canary's run (m,)."""
    run = np.arange(m) // p_x
    axis = np.concatenate([rng.permutation(p_x) for _ in range(math.ceil(m / p_x))])[:m]
    x = np.zeros((m, p_x))
    x[np.arange(m), axis] = rng.choice([-CANARY_NORM, CANARY_NORM], size=m)
    return x, run


def logits(theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The logistic model θ = [w, b]'s logits on rows x."""
    return x @ theta[:-1] + theta[-1]


def canary_scores(x: np.ndarray, y: np.ndarray, setting: dp_sgd.DpSgd, reference: np.ndarray, canaries: int,
                  seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Train the audit runs of DP-SGD at ``setting`` on the members x (n, p_x), y (n) and ``canaries`` canaries
    labelled against the model ``reference`` (trained on the members alone): each canary's score (its label's log-odds
    under its run's model) and whether it was in; inclusions, canaries and runs drawn from ``seed``."""
    n, p_x = x.shape
    rng = np.random.default_rng([seed, 4])
    inputs, run = canary_inputs(canaries, p_x, rng)
    labels = (logits(reference, inputs) < 0).astype(float)  # the class the model without canaries finds less likely
    included = rng.random(canaries) < 0.5
    seeds = rng.integers(0, 2**31 - 1, size=int(run.max(initial=-1)) + 1)
    scores = np.empty(canaries)
    for k, run_seed in enumerate(seeds):
        mine = run == k
        inside = mine & included
        sampling = dp_sgd.Sampling(n, (n + mine.sum() / 2) / dp_sgd.lots(n, setting.batch_size))
        model = dp_sgd.train(np.concatenate([x, inputs[inside]]), np.concatenate([y, labels[inside]]), setting,
                             int(run_seed), sampling)
        scores[mine] = (2 * labels[mine] - 1) * logits(model.theta, inputs[mine])
    return scores, included


def audit(x: np.ndarray, y: np.ndarray, setting: dp_sgd.DpSgd, reference: np.ndarray, canaries: int,
          guess_share: float, seed: int) -> OneRunAudit:
    """:func:`canary_scores` turned into guesses on a ``guess_share`` of the canaries and the bound at the setting's δ."""
    scores, included = canary_scores(x, y, setting, reference, canaries, seed)
    k_each = math.floor(guess_share * canaries / 2)
    guesses, correct = guess(scores, included, k_each, k_each)
    return OneRunAudit(canaries, guesses, correct, setting.delta)
