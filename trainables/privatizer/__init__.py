"""The privatizer on AMNIST (mechanism.py) and its objective (loss.py), which its Gaussian-mixture check
(trainables/gmm) shares (docs/mechanisms.md#privatizer)."""
