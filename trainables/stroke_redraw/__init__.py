"""The stroke redraw baseline: every stroke of a grayscale image redrawn at one width
(docs/mechanisms.md#stroke-redraw-baseline)."""
