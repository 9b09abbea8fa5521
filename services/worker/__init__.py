"""The worker process: one entry point, domains chosen on the command line."""
