"""Tables of the simulated Control iD device: fields, keys and links."""

from __future__ import annotations

from dataclasses import dataclass, field

INT = "int"
STR = "str"


@dataclass(frozen=True)
class Table:
    """One device table: typed fields, required fields, unique keys and parent links."""

    fields: dict[str, str]
    required: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    parents: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)
    nullable: frozenset[str] = frozenset()

    @property
    def has_id(self) -> bool:
        """Whether rows carry an `id` column (link tables do not)."""
        return "id" in self.fields


def _link(a: str, a_table: str, b: str, b_table: str) -> Table:
    # Link tables key on the pair, so linking twice is a unique-constraint error.
    return Table(
        fields={a: INT, b: INT},
        required=(a, b),
        unique=((a, b),),
        parents={a: a_table, b: b_table},
    )


_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "hol1", "hol2", "hol3")

TABLES: dict[str, Table] = {
    "users": Table(
        fields={
            "id": INT,
            "registration": STR,
            "name": STR,
            "password": STR,
            "salt": STR,
            "user_type_id": INT,
            "begin_time": INT,
            "end_time": INT,
            "image_timestamp": INT,
            "last_access": INT,
        },
        required=("registration", "name"),
        unique=(("registration",),),
        defaults={
            "password": "",
            "salt": "",
            "user_type_id": None,
            "begin_time": 0,
            "end_time": 0,
            "image_timestamp": 0,
            "last_access": 0,
        },
        nullable=frozenset({"user_type_id"}),
    ),
    # begin_time / end_time on a credential: our extension (0 = no check), so one user's
    # credentials can carry their own windows; the user's window still applies too.
    "cards": Table(
        fields={"id": INT, "value": INT, "user_id": INT, "begin_time": INT, "end_time": INT},
        required=("value", "user_id"),
        unique=(("value",),),
        parents={"user_id": "users"},
        defaults={"begin_time": 0, "end_time": 0},
    ),
    "qrcodes": Table(
        fields={"id": INT, "value": STR, "user_id": INT, "begin_time": INT, "end_time": INT},
        required=("value", "user_id"),
        unique=(("value",),),
        parents={"user_id": "users"},
        defaults={"begin_time": 0, "end_time": 0},
    ),
    "groups": Table(fields={"id": INT, "name": STR}, required=("name",)),
    "user_groups": _link("user_id", "users", "group_id", "groups"),
    "access_rules": Table(
        fields={"id": INT, "name": STR, "type": INT, "priority": INT},
        required=("name",),
        defaults={"type": 1, "priority": 0},
    ),
    "user_access_rules": _link("user_id", "users", "access_rule_id", "access_rules"),
    "group_access_rules": _link("group_id", "groups", "access_rule_id", "access_rules"),
    "portals": Table(
        fields={"id": INT, "name": STR, "area_from_id": INT, "area_to_id": INT},
        required=("name",),
        defaults={"area_from_id": 1, "area_to_id": 2},
    ),
    "portal_access_rules": _link("portal_id", "portals", "access_rule_id", "access_rules"),
    "time_zones": Table(fields={"id": INT, "name": STR}, required=("name",)),
    "time_spans": Table(
        fields={"id": INT, "time_zone_id": INT, "start": INT, "end": INT}
        | dict.fromkeys(_DAYS, INT),
        required=("time_zone_id", "start", "end"),
        parents={"time_zone_id": "time_zones"},
        defaults=dict.fromkeys(_DAYS, 0),
    ),
    "access_rule_time_zones": _link("access_rule_id", "access_rules", "time_zone_id", "time_zones"),
    "access_logs": Table(
        fields={
            "id": INT,
            "time": INT,
            "event": INT,
            "device_id": INT,
            "identifier_id": INT,
            "user_id": INT,
            "portal_id": INT,
            "identification_rule_id": INT,
            "card_value": INT,
            "qrcode_value": STR,
            "pin_value": STR,
            "confidence": INT,
            "mask": INT,
            "log_type_id": INT,
        },
        required=("time", "event"),
        defaults={
            "device_id": 0,
            "identifier_id": 0,
            "user_id": 0,
            "portal_id": 0,
            "identification_rule_id": 0,
            "card_value": 0,
            "qrcode_value": "",
            "pin_value": "",
            "confidence": 0,
            "mask": 0,
            "log_type_id": -1,
        },
    ),
    "access_events": Table(
        fields={
            "id": INT,
            "event": STR,
            "type": STR,
            "identification": STR,
            "device_id": INT,
            "timestamp": INT,
        },
        required=("event", "type", "timestamp"),
        defaults={"identification": "", "device_id": 0},
    ),
}

# Factory content: one portal, an "always" time zone and an allow rule bound to both,
# so a grant is a single `user_access_rules` link to rule 1.
SEED: dict[str, list[dict[str, object]]] = {
    "portals": [{"id": 1, "name": "Catraca"}],
    "time_zones": [{"id": 1, "name": "Sempre"}],
    "time_spans": [
        {"id": 1, "time_zone_id": 1, "start": 0, "end": 86399,
         **dict.fromkeys(_DAYS[:7], 1), **dict.fromkeys(_DAYS[7:], 1)},
    ],
    "access_rules": [{"id": 1, "name": "Acesso liberado", "type": 1, "priority": 0}],
    "portal_access_rules": [{"portal_id": 1, "access_rule_id": 1}],
    "access_rule_time_zones": [{"access_rule_id": 1, "time_zone_id": 1}],
}

WEEKDAY_FIELDS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # indexed by date.weekday()
