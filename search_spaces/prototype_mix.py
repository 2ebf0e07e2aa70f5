"""A per-record mix of two releases that learn nothing (docs/metrics.md#the-baselines-hull): each record released as
it is with probability ``verbatim``, otherwise as its digit prototype, the draw independent of its secret. Its points
check the premise of the baselines' hull on real numbers: at a share p of verbatim records the data user's and the
attacker's accuracies and the mean squared error should be the mix of the two ends' (``benchmarks/hull_premise.py``).
``verbatim`` 0 is the digit prototype and 1 the raw release, so the grid holds both ends."""
from search_spaces.digit_prototype import prototype_variant

SHARES = [0.0, 0.25, 0.5, 0.75, 1.0]

PRESET = prototype_variant("prototype-mix", "verbatim", [0.0, 0.5, 1.0], SHARES,
                           "verbatim shares 0, 0.25, 0.5, 0.75 and 1", "prototype or verbatim, per record")
