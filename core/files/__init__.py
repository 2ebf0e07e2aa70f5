"""Every file putlab reads back, through one validated reader per format, and the one error they raise.

- :mod:`core.files.source`: the bytes and text of a file (it exists, is a file, is within a size limit, is UTF-8
  text), and :class:`~core.files.source.InputFileError`, one line naming the file and the problem;
- :mod:`core.files.structured`: JSON and YAML parsed (YAML safely, within limits on aliases, their expansion and
  nesting) and validated against the caller's pydantic model;
- :mod:`core.files.tables`: CSV tables checked against a declared schema (required columns, number or text per
  column, row by row with pydantic).

The modules import nothing of putlab's own and are imported by module (not from this package), so a reader of YAML
loads neither pandas nor anything else it does not need.
"""
