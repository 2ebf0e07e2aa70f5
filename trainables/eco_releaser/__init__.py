"""The α-MI releaser on ECO smart-meter days (docs/mechanisms.md#on-eco-smart-meter-days-eco-eco-si)."""
