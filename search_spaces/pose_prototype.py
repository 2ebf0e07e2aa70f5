"""The pose prototype on AMNIST (docs/mechanisms.md#pose-prototype): each image released as the mean of the training
records that share its predicted digit and its coarse pose (the centroid's row and column, the slant and the width,
each in ``pose_bins`` bins by the digit's quantiles). A learnless diagnostic beside the digit prototype (``pose_bins``
0): how much distortion features that carry little of the stroke thickness can buy, and what the attackers read of it.
Width moves with the stroke, so the grid's finer bins are where the thickness comes back. The releaser's three
comparison grids run beside it (the digit prototype, pose_bins 0, among them), so each pose point is placed against the
baselines' hull."""
from search_spaces.amnist import PRESET as RELEASER
from search_spaces.digit_prototype import prototype_variant

BINS = [2, 3]  # 2⁴ and 3⁴ pose cells a digit (0, the digit prototype, is a comparison grid)

PRESET = prototype_variant("pose-prototype", "pose_bins", [2], BINS, "2 and 3 bins of each pose feature",
                           "pose prototype", RELEASER.comparison_grids)
