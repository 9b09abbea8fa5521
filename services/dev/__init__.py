"""`esteira dev`: the whole system on one machine, supervised as one process group."""
