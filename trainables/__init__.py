"""Worker-side code: mechanisms (one folder each, behind trainables.mechanism.Mechanism), the one Tune loop that
runs them, their networks, losses and data sets.

Never imports ``platform.*`` (putlab's driver package shadows the standard module, see platform/__init__.py): in a
Ray worker the standard ``platform`` module is already loaded, so the driver layer must stay on the driver.
"""
