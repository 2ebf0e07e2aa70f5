"""The attackers: one module per attacker, each ending in its ``SPECS``, and the registry that names them.

Beside the attackers sit what several of them share: ``tuning`` (what a tuned attacker reports of the classifier
family of ``core.classifier``), ``membership_stats`` (membership metrics with bootstrap intervals) and
``reference_attack`` (what RMIA and LiRA share, over ``core.reference_models``). May import ``attacks.base``,
``attacks.spec``, ``attacks.plots`` and ``core``; never the farm's machinery or the audits.
"""
