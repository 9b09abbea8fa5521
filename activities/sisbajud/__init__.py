"""Side effects of the SISBAJUD executor: Mensageria, Midaz, the operational store, Temporal."""
