"""Readiness of the whole system: the processes, workers and signer parts `/api/ready` and
the banner judge (read by the API process, `esteira status` and `esteira dev`)."""
