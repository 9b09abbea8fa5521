"""The SISBAJUD executor's contracts: names, task queues,
workflow ids, payloads, ledger shapes, error codes."""
