"""The attack farm: attackers trained fresh on a checkpoint's released data (DESIGN.md §4).

Worker-side code: never imports ``platform.*``.
"""
