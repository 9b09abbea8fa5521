"""What an operator does to the signer, shared by the REST API, gRPC and the dashboard."""

from __future__ import annotations

from activities.signer.operator.face import SignerOperations

__all__ = ["SignerOperations"]
