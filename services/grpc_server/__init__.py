"""The gRPC server: generated stubs under `gen/`, thin servicers beside them."""
