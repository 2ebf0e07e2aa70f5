"""Running a sweep: preflight checks, Ray and the Tuner, the MLflow trial logger, the attack farm's scheduler,
interrupts, progress and cost lines, Tune storage and the resume seal, and a preset's comparison grid.

May import: ``platform.plan``, ``platform.results``, ``platform.errors``, and the layers below ``platform``.
Never ``figures`` or ``papers``.
"""
