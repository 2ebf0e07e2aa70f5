"""The reproduction report's content: the papers' claims quoted from their text, and how each is measured from a
study's runs (with seed bands and a verdict).

May import: ``platform.results``, ``platform.figures`` and ``platform.errors``. Never ``plan`` or ``run``.
"""
