"""The pickup board's contracts: names, task queues, workflow
ids, payloads, error codes."""
