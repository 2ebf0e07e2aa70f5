"""The α-MI paper's rows' caveats and findings in words (:mod:`platform.papers.alpha_mi` attaches them): how putlab's
studies differ from the paper's setting, and what the scale study found where the report's numbers alone do not say it.
"""

QUICK_SCALE = ("the quick profile plays the game on 2,000 of the 28,476 training images for 4 epochs and tests on 1,000 "
               "of the 4,681; its attackers and the raw-image classifiers train on the release of all 28,476 training "
               "records (the quick profile's own 5,000 give a lower bound); the paper uses all of "
               "AMNIST (its batch size and adversary steps are lost in the text)")
LABELS = ("the paper's 28,568 training images carry thin/thick labels from bounds derived from the training images "
          "themselves, which differ from putlab's (the labeler's fixed table) for digits 4 and 6 (see § IV-A1 above); "
          "the test labels agree")
ALPHAS_LOST = ("the paper's α values are lost in the text (α = 1, the MI model, is named in words); the quick grid runs "
               "α = 1 and ∞ only, so the paper's other curves have no row")
SCALE = ("the scale profile: twice the quick study's images and epochs, still a seventh of AMNIST; tested on 1,000 "
         "images; every attacker trains on the releases of all 28,476 training records; α = 1 only")
RAW_SCALE = ("read from the scale study, which logs the raw-image baselines (the quick study logs the same, at the same "
             "sizes): a tuned classifier family trained on all 28,476 of AMNIST's training images, scored on 1,000 of "
             "its 4,681 test images (each sweep's logged interval is over those 1,000; the row's is the t interval over the "
             "sweeps); the paper uses all of AMNIST")
RAW_STRONGER = ("putlab's raw-image attacker (a tuned family trained on every training image) reads thickness above "
                "the paper's number here; the paper names 'a model' on the original images, without its training "
                "budget")
# What the scale study found (seeds 0, 1 and 2 at today's plan, every attacker on all 28,476 records; seed 2's
# stroke-redraw and digit-prototype grids have not run, and no row reads them); the numbers are the report's rows and
# the trials' logged curves, the reading is ours
SCALE_FINDING = {
    1: ("measured at seeds 0, 1 and 2: with one adversary step per releaser step, seed 0 at "
        "λ = 300 to 3000 keeps the digit (0.93–0.96) while its in-game adversary falls to 0.61–0.69 and the "
        "strongest fresh attacker still reads thickness at 0.91–0.94 (seed 2 alike: digit 0.96–0.97, strongest "
        "attacker 0.92–0.95): the releaser outruns its adversary instead of "
        "hiding S. Seed 1's release went black in its second epoch at λ = 300 and 1000 (digit accuracy 0.10, every "
        "farm attacker 0.50: collapsed; the pixels are below 1e-13 yet differ, and a linear attacker on their logarithm "
        "still reads thickness at 0.57 and the digit at 0.38 at λ = 1000, so 0.50 is the farm's blind spot), the "
        "point the releaser's loss prices lowest at these λ (a black image costs "
        "about 92; seed 0's live releases cost 87–112 an epoch from epoch 2 on at λ = 300, 170–287 at λ = 1000), and "
        "once black its gradient is 0. At λ = 3000 seed 1 dimmed to near black (PSNR 9.6 dB), its digit read at "
        "0.91 and its thickness at 0.90"),
    5: ("measured at seeds 0, 1 and 2: with five adversary steps the in-game adversary stays closer to a fresh one "
        "(0.75–0.92), and from λ = 10 to 100 the digit accuracy falls from 0.98–0.99 to 0.92–0.97 and PSNR from 26 "
        "to 12.5–15 dB while the strongest attacker falls only from 0.96 to 0.90–0.93; no release collapsed"),
}
SCALE_WHY = ("the digit alone reads thickness at about 0.62 (`baseline/attack/imputation/accuracy`), so the paper's "
             "'about 60 %' is the release hiding all but what the digit says; no release here that keeps the digit "
             "brings the strongest attacker below 0.89. Not tried here, and each a possible reason: the full data set "
             "and more epochs, other α, and another α-MI estimator")
FULL_PRIVACY_DIGIT = ("digit accuracy significantly high at the first full-privacy point; one α (lost in the text) gets "
                      "there with lower digit accuracy than the others")
ALMOST = "'almost preserved' is read as at least 92.25 %, 5 points under the paper's raw-image 97.25 %"
DA_POINT = ("putlab's middle point is the highest digit accuracy of a classifier trained afresh on the release where the "
            "strongest attacker reads ≤ 0.6; the paper picks its points by eye")
SYNTHETIC_ECO = ("the ECO studies run on the synthetic stand-in (the real files need `--set data_root=DIR`), whose "
                 "routines are the generator's, not the ECO households'")
ECO_SETTING = ("releaser 4 LSTM layers × 64, adversary and attacker 3 LSTM layers × 32 (the paper's); putlab's windows are "
               "24 hours (the paper's T is lost in the text)")
HOUR_FLOOR = ("pooled over hours, the hour of day alone tells occupancy well above chance on the synthetic windows "
              "(the sweep logs it as `baseline/attack/hour_only/accuracy`): an attacker that knows the hour stays near "
              "that level whatever the release")
