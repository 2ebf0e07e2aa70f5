"""The α-MI releaser on AMNIST (docs/mechanisms.md#α-mi-releaser)."""
