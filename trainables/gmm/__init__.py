"""The Gaussian-mixture check of the privatizer's information bound (docs/mechanisms.md#the-gaussian-mixture-check-gmm):
a linear filter trained with the privatizer's objective on a two-bit mixture whose information quantities are exact.
An experiment, not a mechanism for data: it uses the privatizer room's objective, so it sits in the layer above the
mechanisms."""
