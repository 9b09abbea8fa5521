"""The pickup domain's face: every operation a door (REST, gRPC, dashboard) may call."""

from __future__ import annotations

from activities.pickup.operator.face import PickupOperations

__all__ = ["PickupOperations"]
