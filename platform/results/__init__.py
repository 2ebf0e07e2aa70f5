"""What a sweep produced, read from MLflow into typed objects: trials, points over seeds, the Pareto front and its
hypervolume, intervals, per-group fronts, a baseline grid's comparison, and number formatting.

The bottom room of the driver: may import ``platform.errors`` and the layers below ``platform`` only.
"""
