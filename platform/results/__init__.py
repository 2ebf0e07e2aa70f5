"""The store (``store.Store``: the driver's one gateway to MLflow) and what a sweep produced, read from it into typed
objects: trials, points over seeds, the Pareto front and its hypervolume, intervals, per-group fronts, a comparison
grid's comparison, number formatting, and a served point's audit verdict against the privacy its registry version
records.

The bottom room of the driver: may import ``platform.errors`` and the layers below ``platform`` only.
"""
