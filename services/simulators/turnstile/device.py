"""One simulated controller: tables, sessions, clock, turnstile and monitor together."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from services.simulators.turnstile import access
from services.simulators.turnstile.events import Monitor, catra_body, dao_body, monitor_config
from services.simulators.turnstile.faults import FaultState
from services.simulators.turnstile.sessions import Clock, Sessions
from services.simulators.turnstile.settings import TurnstileSimSettings
from services.simulators.turnstile.state import DeviceError, ObjectStore, Row

NON_IDENTIFIED_ACCESS = 10  # portal opened through the API
RESULTS = {
    access.NOT_IDENTIFIED: "not_identified",
    access.DENIED: "denied",
    access.GRANTED: "granted",
    access.GAVE_UP: "gave_up",
    NON_IDENTIFIED_ACCESS: "released",
}


class Device:
    """The whole simulated controller; `reset()` brings it back to factory state."""

    def __init__(
        self, settings: TurnstileSimSettings, clock: Callable[[], float] | None = None
    ) -> None:
        self.settings = settings
        self.clock = Clock(clock or time.time)
        self.faults = FaultState()
        self.monitor = Monitor(
            self.faults,
            retries=settings.push_retries,
            retry_delay=settings.push_retry_delay_seconds,
        )
        self._factory()

    def _factory(self) -> None:
        s = self.settings
        self.store = ObjectStore(seed=s.seed_defaults)
        self.sessions = Sessions(self.clock, s.session_ttl_seconds)
        self.monitor.config = monitor_config(s.monitor_url, s.monitor_timeout_ms)
        self.general: dict[str, str] = {"catra_timeout": str(int(s.catra_timeout_seconds * 1000))}
        self.catra: dict[str, str] = {"gateway": s.exit_direction}
        self.armed: tuple[str, float] | None = None
        self.turns = {"left_turns": 0, "right_turns": 0, "entrance_turns": 0, "exit_turns": 0}

    async def reset(self) -> None:
        """Factory state: tables, sessions, clock, faults and monitor queue."""
        self.clock.reset()
        self.faults.clear()
        await self.monitor.reset()
        self._factory()

    def _log(self, event: int, at: int, portal_id: int, **fields: Any) -> Row:
        rid = self.store.insert(
            "access_logs",
            {
                "time": at,
                "event": event,
                "device_id": self.settings.device_id,
                "portal_id": portal_id,
                **fields,
            },
        )
        row = self.store.rows["access_logs"][rid]
        self.monitor.publish("dao", dao_body(self.settings.device_id, row))
        return row

    def _turnstile(self, kind: str, at: int) -> Row:
        rid = self.store.insert(
            "access_events",
            {
                "event": "catra",
                "type": kind,
                "identification": str(uuid.uuid4()),
                "device_id": self.settings.device_id,
                "timestamp": at,
            },
        )
        row = self.store.rows["access_events"][rid]
        self.monitor.publish("catra_event", catra_body(self.settings.device_id, row))
        return row

    def _turn(self, direction: str, at: int) -> Row:
        right = direction == "clockwise"
        self.turns["right_turns" if right else "left_turns"] += 1
        is_exit = direction == self.catra["gateway"]
        self.turns["exit_turns" if is_exit else "entrance_turns"] += 1
        return self._turnstile("TURN_RIGHT" if right else "TURN_LEFT", at)

    def present(
        self,
        *,
        credential: dict[str, Any],
        portal_id: int,
        at: int | None,
        turn: bool,
        direction: str | None,
    ) -> dict[str, Any]:
        """A person shows a credential: decide, log, turn (or give up) and notify."""
        at = self.clock.now() if at is None else at
        user = access.find_user(self.store, **credential)
        decision = access.decide(
            self.store,
            user,
            portal_id=portal_id,
            at=at,
            tz=self.settings.device_tz,
            credential=access.find_credential(self.store, **credential),
        )
        event = decision.event
        if event == access.GRANTED and not turn:
            event = access.GAVE_UP
        log = self._log(
            event,
            at,
            portal_id,
            user_id=decision.user_id,
            card_value=credential.get("card_value") or 0,
            qrcode_value=credential.get("qrcode") or "",
        )
        turned = None
        if event == access.GRANTED:
            self.store.rows["users"][decision.user_id]["last_access"] = at
            turned = self._turn(direction or self.catra["gateway"], at)
        elif event == access.GAVE_UP:
            turned = self._turnstile("GIVE_UP", at)
        return {
            "event": event,
            "result": RESULTS[event],
            "reason": decision.reason,
            "user_id": decision.user_id,
            "access_rule_id": decision.rule_id,
            "portal_id": portal_id,
            "time": at,
            "access_log_id": log["id"],
            "access_event_id": turned["id"] if turned else None,
        }

    def release(self, parameters: str) -> None:
        """`catra` action: arm one turn in the allowed direction for `catra_timeout` ms."""
        params = dict(p.strip().split("=", 1) for p in parameters.split(",") if "=" in p)
        allow = params.get("allow", "").strip()
        if allow not in {"clockwise", "anticlockwise", "both"}:
            raise DeviceError(400, f"invalid catra parameters: {parameters}")
        window = int(self.general.get("catra_timeout") or 0) / 1000
        self.armed = (allow, self.clock.now() + window)

    def turn_released(self, direction: str, portal_id: int) -> dict[str, Any]:
        """Someone pushes the arm after a remote release; locked arms refuse."""
        at = self.clock.now()
        armed, self.armed = self.armed, None
        if armed is None or at > armed[1] or armed[0] not in {direction, "both"}:
            raise DeviceError(409, "turnstile is locked")
        log = self._log(NON_IDENTIFIED_ACCESS, at, portal_id)
        event = self._turn(direction, at)
        return {
            "event": NON_IDENTIFIED_ACCESS,
            "result": RESULTS[NON_IDENTIFIED_ACCESS],
            "access_log_id": log["id"],
            "access_event_id": event["id"],
            "time": at,
        }
