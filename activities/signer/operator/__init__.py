"""What an operator does to the signer, shared by the REST API, gRPC and the dashboard."""
