"""The kicker a door builds once: it starts the Temporal work a committed change leaves."""

from __future__ import annotations

# Re-exported: doors build one and pass it to the operations that change state.
from activities.pickup.kick import Kicker as Kicker
