"""The attack farm: attackers trained fresh on a checkpoint's released data (docs/attacks.md).

Worker-side code: never imports ``platform.*``. At this top sit what every room shares: ``base`` (typed inputs, results
and the attacker protocol) and ``spec`` (what an attacker declares to the farm). Below them, four rooms:

- ``attacks.farm``: the farm's per-checkpoint machinery (every named attacker against one checkpoint, the membership
  attackers over a checkpoint's networks) and the reference models RMIA and LiRA train; may import every room below.
- ``attacks.audits``: measurements about a release or a training run that are not one attacker's score: the DP-SGD
  audit, the most exposed records, learning curves, the imputation attacker, KL membership leakage; may import
  ``attackers`` and ``plots``.
- ``attacks.attackers``: one module per attacker, with the registry beside them; may import ``plots`` (and the farm's
  reference models, which RMIA and LiRA train through).
- ``attacks.plots``: pictures only, apart from the computing; imports no other room (result types only while type
  checking).
"""
