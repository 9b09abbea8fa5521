"""The pickup domain's face: every operation a door (REST, gRPC, dashboard) may call."""
