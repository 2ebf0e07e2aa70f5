"""The farm's per-checkpoint machinery: every named attacker against one checkpoint (``checkpoint``), the membership
attackers over every network of a checkpoint (``membership_farm``). The reference models RMIA and LiRA train on
population subsets live below every side, in ``core.reference_models``.

May import every attacks room (``attackers``, ``audits``, ``plots``) and ``core``.
"""
