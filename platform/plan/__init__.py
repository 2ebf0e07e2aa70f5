"""What a sweep will run: the validated sweep spec from a preset and overrides, the config schema's text, the seed
axis, and the options a resumed sweep keeps.

May import: ``platform.results`` (to read a recorded sweep), ``platform.errors``, and the worker layers below
``platform`` (``search_spaces``, ``core``). Never ``run``, ``figures`` or ``papers``.
"""
