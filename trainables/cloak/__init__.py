"""Cloak: learned per-pixel noise over a frozen target classifier (docs/mechanisms.md#cloak)."""
