"""What every other package shares and nothing below it: networks, training with early stopping, metrics, data sets,
and the command-line helpers the driver and the release service both use. Imports nothing of putlab's own above it."""
