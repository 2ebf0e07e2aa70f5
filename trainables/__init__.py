"""Worker-side code: one folder per mechanism (a room each: its config, its mechanism, its own networks and figures),
and ``trainables.shared``, the machinery they all use (the ``Mechanism`` contract, the one Tune loop, the image game).

Mechanism rooms import ``trainables.shared`` and never each other; ``shared`` imports no mechanism room. Two rooms sit
above them: ``trainables.anchored``, the releaser's game played from the digit prototype, imports those two rooms;
``trainables.gmm``, the privatizer's objective checked on a Gaussian mixture, imports the privatizer's.
Never imports ``platform.*`` (putlab's driver package shadows the standard module, see platform/__init__.py): in a
Ray worker the standard ``platform`` module is already loaded, so the driver layer must stay on the driver.
"""
