"""Workflows of the `ops` domain."""
