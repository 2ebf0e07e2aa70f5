"""Membership leakage of linear models on Adult (docs/mechanisms.md#membership-models)."""
