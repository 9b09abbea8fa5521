"""Test hooks under `/_sim/`: present credentials, turn the arm, faults, clock, reset."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, model_validator

from services.simulators.turnstile.faults import Faults, FaultsPatch
from services.simulators.turnstile.routes import DeviceDep
from services.simulators.turnstile.state import DeviceError

router = APIRouter(prefix="/_sim", tags=["simulator"])

Direction = Literal["clockwise", "anticlockwise"]


class PresentCredential(BaseModel):
    """A person at the turnstile showing exactly one card or QR code.

    A Control iD device identifies by what is presented (a card read, a QR code scanned);
    nobody types a registration or a user id at a turnstile, so neither is accepted here.
    """

    model_config = ConfigDict(extra="forbid")

    card_value: int | None = None
    qrcode: str | None = None
    portal_id: int = 1
    at: int | None = None
    turn: bool = True
    direction: Direction | None = None

    @model_validator(mode="after")
    def _one_credential(self) -> PresentCredential:
        if (self.card_value is None) == (self.qrcode is None):
            raise ValueError("give exactly one of card_value, qrcode")
        return self


class Turn(BaseModel):
    """A push on the arm after a remote release."""

    direction: Direction
    portal_id: int = 1


class ClockChange(BaseModel):
    """Set device time (`now`, Unix seconds) or move it (`advance`, seconds)."""

    now: float | None = None
    advance: float | None = None


@router.post("/access")
async def present(device: DeviceDep, body: PresentCredential) -> dict[str, Any]:
    """Identify, decide, log, turn or give up, and push the monitor notifications."""
    credential = body.model_dump(include={"card_value", "qrcode"})
    return device.present(
        credential={k: v for k, v in credential.items() if v is not None},
        portal_id=body.portal_id,
        at=body.at,
        turn=body.turn,
        direction=body.direction,
    )


@router.post("/turn")
async def turn(device: DeviceDep, body: Turn) -> dict[str, Any]:
    """Pass through after `execute_actions` armed the turnstile; 409 when locked."""
    return device.turn_released(body.direction, body.portal_id)


@router.get("/faults")
async def get_faults(device: DeviceDep) -> Faults:
    """Faults in force, with their remaining counters."""
    return device.faults.current


@router.post("/faults")
async def set_faults(device: DeviceDep, body: FaultsPatch) -> dict[str, Any]:
    """Change some faults; `expire_sessions` / `session_ttl_seconds` act on sessions."""
    faults = device.faults.apply(body)
    expired = device.sessions.expire_all() if body.expire_sessions else 0
    if body.session_ttl_seconds is not None:
        device.sessions.ttl_seconds = body.session_ttl_seconds
    return {
        "faults": faults.model_dump(),
        "sessions_expired": expired,
        "session_ttl_seconds": device.sessions.ttl_seconds,
    }


@router.delete("/faults")
async def clear_faults(device: DeviceDep) -> Faults:
    """Back to a healthy device (sessions untouched)."""
    device.faults.clear()
    return device.faults.current


@router.post("/reset")
async def reset(device: DeviceDep) -> dict[str, bool]:
    """Factory state: tables, sessions, clock, faults and monitor deliveries."""
    await device.reset()
    return {"reset": True}


@router.get("/clock")
async def get_clock(device: DeviceDep) -> dict[str, int]:
    """Device time in Unix seconds."""
    return {"now": device.clock.now()}


@router.post("/clock")
async def set_clock(device: DeviceDep, body: ClockChange) -> dict[str, int]:
    """Jump or advance device time; validity windows and sessions follow it."""
    if body.now is not None:
        device.clock.set(body.now)
    if body.advance is not None:
        device.clock.advance(body.advance)
    return {"now": device.clock.now()}


@router.get("/deliveries")
async def deliveries(device: DeviceDep) -> list[dict[str, Any]]:
    """Monitor notifications sent, failed or dropped, oldest first."""
    return [d.as_dict() for d in device.monitor.deliveries]


@router.post("/deliveries/flush")
async def flush(device: DeviceDep, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Wait until queued notifications are settled, then list them."""
    try:
        await device.monitor.flush(timeout)
    except TimeoutError as exc:
        raise DeviceError(504, "deliveries still pending") from exc
    return [d.as_dict() for d in device.monitor.deliveries]
