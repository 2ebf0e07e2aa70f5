"""Audits: measurements about a release or a training run beyond one attacker's score: the empirical ε of DP-SGD
(``dp_audit``), the most exposed records (``exposure``), learning curves (``learning_curve``), the imputation attacker
(``imputation``) and KL membership leakage (``kl_leakage``).

May import ``attacks.attackers``, ``attacks.plots``, ``attacks.base`` and ``core``; never the farm.
"""
