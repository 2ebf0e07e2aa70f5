"""The reproduction report's content: the papers' claims quoted from their text (``claims``), how each is measured
from a study's runs with its seed band (``measures``), and the verdicts and Markdown of the report (``report``).

May import: ``platform.results``, ``platform.figures`` and ``platform.errors``. Never ``plan`` or ``run``.
"""
