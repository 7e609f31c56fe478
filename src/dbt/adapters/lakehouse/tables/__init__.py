"""Tables over their life: the interval ledger, maintenance, the folders of dropped tables."""
