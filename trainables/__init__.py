"""Worker-side code: mechanisms as Ray Tune trainables, their networks, losses and data sets.

Never imports ``platform.*`` (putlab's driver package shadows the standard module, see platform/__init__.py): in a
Ray worker the standard ``platform`` module is already loaded, so the driver layer must stay on the driver.
"""
