"""In-memory Midaz ledger simulator (HTTP shapes, error codes, idempotency, faults)."""

from services.simulators.midaz.app import create_app, main

__all__ = ["create_app", "main"]
