"""The reproduction report's content: what a row is (``claim``: studies, claims and their kinds), one module per paper
with its studies and its claims quoted from its text (``alpha_mi``, ``privatizer``, ``cloak``, ``membership``,
gathered by ``catalogue``), how each claim is measured from a study's runs with its seed band and test (``measures``),
a study's runs kept as files beside the report (``snapshot``), a study run in parts joined into one (``parts``), and
the verdicts and Markdown of the report (``report``).

May import: ``platform.results``, ``platform.figures`` and ``platform.errors``. Never ``plan`` or ``run``.
"""
