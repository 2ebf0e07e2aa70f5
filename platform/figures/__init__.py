"""Pictures of results every sweep gets: the front and trend figures, and the self-contained HTML report with its
template. A study's own figures are its preset's (``search_spaces.SweepFigure``), drawn on the worker side.

Draws from typed objects (``platform.results`` reads them from the store); never imports mlflow.
May import: ``platform.results`` and ``platform.errors``. Never ``plan``, ``run`` or ``papers``.
"""
