"""The digit prototype baseline: each image replaced by its predicted class's mean image
(docs/mechanisms.md#digit-prototype-baseline)."""
