"""Each domain's contract with Temporal: task queues, workflow ids, inputs and results."""
