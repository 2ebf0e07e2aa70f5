"""ECO α-MI releaser with side information (weekday, month): the adversary and attackers see it; the
``releaser_si`` axis compares a releaser blind to SI with one that reads it (DESIGN §3.1, §4)."""
from search_spaces.eco import build

PRESET = build("eco-si", side_info=True, extra_grid={"releaser_si": [0, 1]})
