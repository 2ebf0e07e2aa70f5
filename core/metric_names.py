"""Metric names more than one layer reads, declared once: presets name them in their axes, objectives and trends, the
mechanisms and the driver's farm write them, the papers and the views read them back. Stored names: never change one
without reading the old.

A preset's Pareto axes and Optuna objectives name one of :data:`DECLARED` or one its mechanism declares in
``Mechanism.metrics`` (``search_spaces.Preset`` refuses any other name: a typo would draw an empty front)."""
from __future__ import annotations

# --- utility: what a data user gets from the release ---------------------------------------------------------------
UTILITY_ACCURACY = "utility/accuracy"
"""The mechanism's own utility classifier's balanced accuracy on the released test split."""
FRESH_ACCURACY = "utility/fresh_accuracy"
"""A data user's classifier trained afresh on the release (the in-game utility net co-adapts with the releaser)."""
PSNR = "utility/psnr"
"""The mean over images of each image's PSNR against its raw image in dB (``core.image_quality``)."""
MSE = "utility/mse"
"""The release's mean squared error per pixel against the raw images (over every image and pixel of the split)."""
PSNR_OF_MSE = "utility/psnr_of_mse"
"""The PSNR of :data:`MSE` in dB, 10·log10(1 / MSE): the image fronts' distortion, which averages over records (a
per-record mix of releases has the mix of their MSEs), where the mean of per-image PSNRs rewards all-or-nothing ones."""
SSIM = "utility/ssim"
"""The release's structural similarity to the raw images (``core.image_quality``)."""
SQUARED_ERROR = "utility/squared_error"
"""The distortion E‖X − Y‖² of the release (``core.image_quality``)."""
NE_ENERGY = "utility/ne_energy"
"""ECO: the normalised error of the released consumption's energy."""

# --- attack: fresh attackers' scores --------------------------------------------------------------------------------
STRONGEST_ATTACK = "attack/max/accuracy"
"""The strongest attacker of S at a checkpoint: the farm's best of the attackers' balanced accuracies (its winner is the
tag ``putlab.strongest_attacker``)."""
SATURATION = "attack/max/saturation"
"""Where the strongest attacker's accuracy is heading with more released records: the asymptote of a power law fitted
to its learning curve (front points; ``/ci_low`` and ``/ci_high`` its 95 % interval)."""
TOP_DECILE = "attack/max/top_decile_accuracy"
"""The strongest attacker's accuracy on the tenth of the test records it is most confident about (attackers that give
probabilities: the deep family)."""
CONFIDENT_SHARE = "attack/max/confident_share"
"""The share of test records the strongest attacker reads right with probability ≥ 0.9."""
STRONGEST_RECORDS = "attack/max/train_records"
"""How many released records the strongest attacker trained on (the farm's data budget)."""
DEEP_ATTACK = "attack/deep/accuracy"
"""The mechanism's own fresh deep attacker of S, a network like the in-game adversary trained afresh on the release."""
DEEP_WITHIN_HOUR = "attack/deep/accuracy_within_hour"
"""ECO: the fresh deep attacker's occupancy accuracy, within the hour."""
ESTIMATOR_ATTACK = "attack/estimator/accuracy"
"""GMM: the Bayes-optimal estimator of S from the release."""
YEOM_ADVANTAGE = "attack/yeom/advantage_abs"
"""Membership: the |advantage| of Yeom et al.'s loss-threshold membership attack."""
YEOM_CANARY_TPR = "attack/yeom/canary/tpr_at_1pct_fpr"
"""The planted canaries' worst-case TPR at 1 % FPR under Yeom et al.'s attack (``attacks.farm.membership_farm``)."""
RMIA_CANARY_TPR = "attack/rmia/canary/tpr_at_1pct_fpr"
"""The same under RMIA."""

def attack_metric(attacker: str, key: str = "accuracy") -> str:
    """What attacker ``attacker`` logs as ``key``: ``attack/<attacker>/<key>`` (its accuracy on the secret by default),
    the one place an attacker's metric name is made."""
    return f"attack/{attacker}/{key}"


# --- leakage: estimates of what the release gives away --------------------------------------------------------------
NORMALISED_ALPHA_MI = "leakage/normalised_alpha_mi"
"""The α-MI estimate Î_α(S;Y)/H_α(S)."""
INFO_REMOVED_KNN = "leakage/info_removed_knn"
"""Cloak: the information about S its sifting removed, by a k-NN estimator."""

DECLARED: frozenset[str] = frozenset({
    UTILITY_ACCURACY, FRESH_ACCURACY, PSNR, MSE, PSNR_OF_MSE, SSIM, SQUARED_ERROR, NE_ENERGY, STRONGEST_ATTACK, STRONGEST_RECORDS,
    DEEP_ATTACK, DEEP_WITHIN_HOUR, ESTIMATOR_ATTACK, YEOM_ADVANTAGE, YEOM_CANARY_TPR, RMIA_CANARY_TPR, NORMALISED_ALPHA_MI,
    INFO_REMOVED_KNN,
})
"""Every name above: what a preset's axes and objectives may name without its mechanism declaring it."""
