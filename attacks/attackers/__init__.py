"""The attackers: one module per attacker, each ending in its ``SPECS``, and the registry that names them.

Beside the attackers sit what several of them share: ``tuning`` (a small family of configurations, chosen on
validation), ``membership_stats`` (membership metrics with bootstrap intervals) and ``reference_attack`` (what RMIA and
LiRA share). May import ``attacks.base``, ``attacks.spec``, ``attacks.plots``, the reference models of
``attacks.farm.reference`` and ``core``; never the farm's machinery or the audits.
"""
