"""Workflows of the `signer` domain."""
