"""The composition root: every process builds its domains' faces here, once."""

from __future__ import annotations

from dataclasses import dataclass

from activities.pickup.operator import PickupOperations
from activities.signer.operator import SignerOperations
from activities.sisbajud.operator import SisbajudOperations
from shared.db.engine import Sessions
from shared.settings import Settings
from shared.temporal import TemporalHandle


@dataclass(frozen=True)
class Faces:
    """The three domains' faces of one process, handed to every door it serves."""

    signer: SignerOperations
    pickup: PickupOperations
    sisbajud: SisbajudOperations


def compose(settings: Settings, sessions: Sessions, temporal: TemporalHandle) -> Faces:
    """Build each face once; nothing connects here (the handle connects on first use)."""
    return Faces(signer=SignerOperations(settings, sessions, temporal),
                 pickup=PickupOperations(settings, sessions, temporal),
                 sisbajud=SisbajudOperations(settings, sessions, temporal))
