"""The privatizer: on AMNIST (mechanism.py) and its Gaussian-mixture check (gmm.py) (docs/mechanisms.md#privatizer)."""
