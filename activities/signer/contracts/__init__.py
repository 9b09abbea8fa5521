"""The signer's contracts: names, task queues, workflow ids,
payloads, error codes."""
