"""Pictures of results: the front, trend and per-study figures, and the self-contained HTML report with its template.

May import: ``platform.results`` and ``platform.errors``. Never ``plan``, ``run`` or ``papers``.
"""
