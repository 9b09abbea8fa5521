"""The operator dashboard: server-rendered pages over the signer, pickup and sisbajud APIs."""
