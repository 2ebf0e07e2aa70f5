"""The machinery every mechanism shares: the ``Mechanism`` contract (``mechanism``), the one Tune loop
(``tune_loop``), the image game of releaser and privatizer (``image_game``), α-mutual information (``alpha_mi``), the
served release map (``release_map``), planted canaries (``canaries``), the data user's utility (``data_user``) and
release figures (``figures``).

May import ``attacks`` and ``core``; never a mechanism's own folder (those import it).
"""
