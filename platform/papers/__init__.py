"""The reproduction report's content: what a row is (``claim``: studies, claims and their kinds), one module per paper
with its studies and its claims quoted from its text (``alpha_mi``, ``privatizer``, ``cloak``, ``membership``,
gathered by ``catalogue``), what a study's sweep holds (``study_runs``), how each claim is measured from it
(``measures``) with the report's intervals and tests (``statistics``) and its rule for collapsed releases
(``collapse``), the verdict each row gets (``verdicts``), a study's runs kept as files beside the report
(``snapshot``), a study run in parts joined into one (``parts``), and the report's Markdown (``markdown``).

May import: ``platform.results``, ``platform.figures`` and ``platform.errors``. Never ``plan`` or ``run``.
"""
