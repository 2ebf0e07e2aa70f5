"""The attack farm: attackers trained fresh on a checkpoint's released data (docs/attacks.md).

Worker-side code: never imports ``platform.*``.
"""
