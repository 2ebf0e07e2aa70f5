"""The anchored releaser (docs/mechanisms.md#anchored-releaser): the α-MI releaser's game played from the digit
prototype's release, a bounded learned residual on top. Built on two mechanism rooms, the releaser's game and the
digit prototype, so it sits in the layer above them."""
