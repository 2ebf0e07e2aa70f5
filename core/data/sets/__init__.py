"""One module per registered data set, each defining ``DATASET`` (core.data.registry finds them by listing this folder)."""
