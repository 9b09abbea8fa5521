"""`esteira backup` and `esteira restore`: the stores, keys, PKI and files in one archive."""
