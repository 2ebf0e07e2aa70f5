"""The plain Gaussian-noise baseline on image data sets (docs/mechanisms.md#gaussian-noise-baseline)."""
