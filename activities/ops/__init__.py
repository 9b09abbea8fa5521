"""Activities of the `ops` domain."""
