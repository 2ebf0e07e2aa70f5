"""The machinery every mechanism shares: the ``Mechanism`` contract (``mechanism``), the one Tune loop
(``tune_loop``), the image data (``image_data``), what every image release shares and the releases that learn
nothing (``image_release``), the game of releaser and privatizer (``image_game``), α-mutual information (``alpha_mi``), the
served release map (``release_map``), planted canaries (``canaries``), the data user's utility (``data_user``) and
release figures (``figures``).

May import ``attacks`` and ``core``; never a mechanism's own folder (those import it).
"""
