"""Webhook gateway: verifies Streaming Hub deliveries before anything is stored."""
