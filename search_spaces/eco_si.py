"""ECO α-MI releaser with side information (weekday, month): the adversary and attackers see it; the
``releaser_si`` axis compares a releaser blind to SI with one that reads it
(docs/mechanisms.md#on-eco-smart-meter-days-eco-eco-si, docs/attacks.md#side_info)."""
from search_spaces.eco import build

PRESET = build("eco-si", side_info=True, extra_grid={"releaser_si": [0, 1]})
