"""The device's identification decision: who is presenting, and may they pass now."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from services.simulators.turnstile.schema import WEEKDAY_FIELDS
from services.simulators.turnstile.state import ObjectStore, Row

NOT_IDENTIFIED = 3
DENIED = 6
GRANTED = 7
GAVE_UP = 13
BLOCK, ALLOW = 0, 1


@dataclass(frozen=True)
class Decision:
    """Outcome of one identification: an `access_logs.event` code and why."""

    event: int
    reason: str
    user_id: int = 0
    rule_id: int = 0


def find_credential(
    store: ObjectStore, *, card_value: int | None = None, qrcode: str | None = None, **_: Any
) -> Row | None:
    """The card or QR code row presented, if one was presented and is on file."""
    if card_value is not None:
        return next((c for c in store.rows["cards"].values() if c["value"] == card_value), None)
    if qrcode is not None:
        return next((c for c in store.rows["qrcodes"].values() if c["value"] == qrcode), None)
    return None


def find_user(
    store: ObjectStore, *, card_value: int | None = None, qrcode: str | None = None
) -> Row | None:
    """The user the presented card or QR code belongs to; nothing else identifies."""
    credential = find_credential(store, card_value=card_value, qrcode=qrcode)
    return store.rows["users"].get(credential["user_id"]) if credential else None


def _active(store: ObjectStore, rule_id: int, local: datetime) -> bool:
    # A rule with no time zone never applies, as on the device: schedules are opt-out, not in.
    zones = {
        link["time_zone_id"]
        for link in store.rows["access_rule_time_zones"].values()
        if link["access_rule_id"] == rule_id
    }
    second = local.hour * 3600 + local.minute * 60 + local.second
    day = WEEKDAY_FIELDS[local.weekday()]
    return any(
        span["time_zone_id"] in zones and span[day] and span["start"] <= second <= span["end"]
        for span in store.rows["time_spans"].values()
    )


def _rules_for(store: ObjectStore, user_id: int) -> set[int]:
    groups = {g["group_id"] for g in store.rows["user_groups"].values() if g["user_id"] == user_id}
    direct = {
        r["access_rule_id"]
        for r in store.rows["user_access_rules"].values()
        if r["user_id"] == user_id
    }
    via_group = {
        r["access_rule_id"]
        for r in store.rows["group_access_rules"].values()
        if r["group_id"] in groups
    }
    return direct | via_group


def decide(store: ObjectStore, user: Row | None, *, portal_id: int, at: int, tz: str,
           credential: Row | None = None) -> Decision:
    """Grant or deny `user` at `portal_id` at Unix time `at` (device-local schedules in `tz`)."""
    if user is None:
        return Decision(NOT_IDENTIFIED, "credential not registered")
    uid = user["id"]
    if credential is not None and credential["begin_time"] and at < credential["begin_time"]:
        return Decision(DENIED, "before the credential's begin_time", uid)
    if credential is not None and credential["end_time"] and at > credential["end_time"]:
        return Decision(DENIED, "after the credential's end_time", uid)
    if user["begin_time"] and at < user["begin_time"]:
        return Decision(DENIED, "before begin_time", uid)
    if user["end_time"] and at > user["end_time"]:
        return Decision(DENIED, "after end_time", uid)
    local = datetime.fromtimestamp(at, ZoneInfo(tz))
    on_portal = {
        p["access_rule_id"]
        for p in store.rows["portal_access_rules"].values()
        if p["portal_id"] == portal_id
    }
    rules = [
        store.rows["access_rules"][rid]
        for rid in sorted(_rules_for(store, uid) & on_portal)
        if _active(store, rid, local)
    ]
    # Block rules are evaluated before allow rules.
    for rule in rules:
        if rule["type"] == BLOCK:
            return Decision(DENIED, f"blocked by access rule {rule['id']}", uid, rule["id"])
    for rule in rules:
        if rule["type"] == ALLOW:
            return Decision(GRANTED, f"allowed by access rule {rule['id']}", uid, rule["id"])
    return Decision(DENIED, "no access rule allows this portal now", uid)
