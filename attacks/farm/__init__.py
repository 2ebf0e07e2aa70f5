"""The farm's per-checkpoint machinery: every named attacker against one checkpoint (``checkpoint``), the membership
attackers over every network of a checkpoint (``membership_farm``), and the reference models RMIA and LiRA train on
population subsets (``reference``, cached by content).

May import every attacks room (``attackers``, ``audits``, ``plots``) and ``core``.
"""
