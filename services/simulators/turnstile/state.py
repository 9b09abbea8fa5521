"""In-memory device tables with SQLite-like constraints (unique keys, parents, cascades)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from services.simulators.turnstile.schema import INT, SEED, STR, TABLES, Table

Row = dict[str, Any]

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a is not None and a < b,
    "<=": lambda a, b: a is not None and a <= b,
    ">": lambda a, b: a is not None and a > b,
    ">=": lambda a, b: a is not None and a >= b,
    "IN": lambda a, b: a in b,
    "NOT IN": lambda a, b: a not in b,
}


class DeviceError(Exception):
    """A command the device refuses; rendered as `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _check_type(table: Table, name: str, value: Any) -> None:
    kind = table.fields[name]
    if value is None and name in table.nullable:
        return
    ok = (kind == INT and isinstance(value, int) and not isinstance(value, bool)) or (
        kind == STR and isinstance(value, str)
    )
    if not ok:
        raise DeviceError(400, f"datatype mismatch: {name}")


def _matches(row: Row, cond: dict[str, Any]) -> bool:
    for name, expected in cond.items():
        value = row.get(name)
        if isinstance(expected, dict):
            for op, operand in expected.items():
                fn = _OPS.get(str(op).upper())
                if fn is None:
                    raise DeviceError(400, f"unsupported operator: {op}")
                if not fn(value, operand):
                    return False
        elif isinstance(expected, list):
            if value not in expected:
                return False
        elif value != expected:
            return False
    return True


def _nulls_last(name: str) -> Callable[[Row], tuple[bool, Any]]:
    """A sort key by column `name` with NULLs after every value."""
    return lambda row: (row.get(name) is None, row.get(name))


class ObjectStore:
    """The device's tables with SQLite-like constraints: unique keys, parents, cascades."""

    def __init__(self, seed: bool = True) -> None:
        self.rows: dict[str, dict[int, Row]] = {name: {} for name in TABLES}
        self._next: dict[str, int] = dict.fromkeys(TABLES, 1)
        if seed:
            for name, rows in SEED.items():
                self.create(name, copy.deepcopy(rows))

    @staticmethod
    def table(obj: Any) -> Table:
        """The schema of `obj`, or the device's error for an unknown object."""
        if not isinstance(obj, str) or obj not in TABLES:
            raise DeviceError(400, f"Invalid object: {obj}")
        return TABLES[obj]

    def _condition(self, obj: str, where: Any) -> dict[str, Any]:
        # The device filters destroy/modify only by the object's own fields.
        if where is None:
            return {}
        if not isinstance(where, dict):
            raise DeviceError(400, "where must be an object")
        table = self.table(obj)
        extra = set(where) - {obj}
        if extra:
            raise DeviceError(400, f"Only the same object can be used as a filter: {sorted(extra)}")
        cond = where.get(obj) or {}
        if not isinstance(cond, dict):
            raise DeviceError(400, "where must be an object")
        for name in cond:
            if name not in table.fields:
                raise DeviceError(400, f"no such column: {name}")
        return cond

    def select(self, obj: str, where: Any = None) -> list[tuple[int, Row]]:
        """(rowid, row) pairs of `obj` matching `where`, in insertion order."""
        cond = self._condition(obj, where)
        return [(rid, row) for rid, row in self.rows[obj].items() if _matches(row, cond)]

    def _validate(self, obj: str, row: Row, skip: Iterable[int] = ()) -> None:
        table = self.table(obj)
        for name, value in row.items():
            if name not in table.fields:
                raise DeviceError(400, f"table {obj} has no column named {name}")
            _check_type(table, name, value)
        for name in table.required:
            if row.get(name) is None:
                raise DeviceError(400, f"NOT NULL constraint failed: {obj}.{name}")
        for name, parent in table.parents.items():
            if row[name] not in self.rows[parent]:
                raise DeviceError(400, "FOREIGN KEY constraint failed")
        skipped = set(skip)
        for key in table.unique + ((("id",),) if table.has_id else ()):
            if "id" in key and row.get("id") is None:
                continue
            probe = tuple(row.get(k) for k in key)
            for rid, other in self.rows[obj].items():
                if rid not in skipped and tuple(other.get(k) for k in key) == probe:
                    cols = ", ".join(f"{obj}.{k}" for k in key)
                    raise DeviceError(400, f"UNIQUE constraint failed: {cols}")

    def create(self, obj: str, values: Any) -> list[int]:
        """Insert every row or none; returns the new ids (rowids for link tables)."""
        table = self.table(obj)
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, dict) for v in values)
        ):
            raise DeviceError(400, "values must be a non-empty list of objects")
        if any(set(v) != set(values[0]) for v in values):
            raise DeviceError(400, "all objects in values must have the same fields")
        snapshot = copy.deepcopy((self.rows, self._next))
        try:
            return [self._insert(obj, table, dict(v)) for v in values]
        except DeviceError:
            self.rows, self._next = snapshot
            raise

    def _insert(self, obj: str, table: Table, row: Row) -> int:
        row = {**table.defaults, **row}
        self._validate(obj, row)
        rid = row["id"] if table.has_id and row.get("id") is not None else self._next[obj]
        if table.has_id:
            row["id"] = rid
        self._next[obj] = max(self._next[obj], rid + 1)
        self.rows[obj][rid] = {k: row[k] for k in table.fields if k in row}
        return rid

    def insert(self, obj: str, row: Row) -> int:
        """Device-internal insert (access logs, turnstile events)."""
        return self._insert(obj, self.table(obj), dict(row))

    def create_or_modify(self, obj: str, values: Any) -> int:
        """Upsert by `id`: a row whose id exists is replaced field by field, else created."""
        table = self.table(obj)
        if not isinstance(values, list) or not all(isinstance(v, dict) for v in values):
            raise DeviceError(400, "values must be a list of objects")
        snapshot = copy.deepcopy((self.rows, self._next))
        try:
            for value in values:
                rid = value.get("id") if table.has_id else self._link_rowid(obj, table, value)
                if rid is not None and rid in self.rows[obj]:
                    self._apply(obj, rid, {k: v for k, v in value.items() if k != "id"})
                else:
                    self._insert(obj, table, dict(value))
        except DeviceError:
            self.rows, self._next = snapshot
            raise
        return len(values)

    def _link_rowid(self, obj: str, table: Table, value: Row) -> int | None:
        # Link tables have no id; their key is the pair, so an existing pair is the upsert hit.
        key = table.unique[0]
        for rid, row in self.rows[obj].items():
            if all(row.get(k) == value.get(k) for k in key):
                return rid
        return None

    def _apply(self, obj: str, rid: int, values: Row) -> None:
        merged = {**self.rows[obj][rid], **values}
        self._validate(obj, merged, skip=[rid])
        self.rows[obj][rid] = merged

    def modify(self, obj: str, values: Any, where: Any) -> int:
        """Set `values` on every matching row; all or nothing; returns the row count."""
        table = self.table(obj)
        if not isinstance(values, dict) or not values:
            raise DeviceError(400, "values must be a non-empty object")
        if "id" in values and table.has_id:
            raise DeviceError(400, "id cannot be modified")
        matched = self.select(obj, where)
        snapshot = copy.deepcopy(self.rows)
        try:
            for rid, _ in matched:
                self._apply(obj, rid, values)
        except DeviceError:
            self.rows = snapshot
            raise
        return len(matched)

    def destroy(self, obj: str, where: Any) -> int:
        """Delete matching rows and, as ON DELETE CASCADE would, rows that point at them."""
        matched = [rid for rid, _ in self.select(obj, where)]
        self._delete(obj, matched)
        return len(matched)

    def _delete(self, obj: str, rids: list[int]) -> None:
        for rid in rids:
            self.rows[obj].pop(rid, None)
        if not rids or not TABLES[obj].has_id:
            return
        gone = set(rids)
        for child, table in TABLES.items():
            for name, parent in table.parents.items():
                if parent == obj:
                    orphans = [r for r, row in self.rows[child].items() if row[name] in gone]
                    self._delete(child, orphans)

    def load(
        self,
        obj: str,
        where: Any = None,
        fields: Any = None,
        order: Any = None,
        limit: Any = None,
        offset: Any = None,
    ) -> list[Row]:
        """Rows of `obj` as `load_objects.fcgi` returns them."""
        table = self.table(obj)
        rows = [dict(row) for _, row in self.select(obj, where)]
        for name in order or []:
            if name not in table.fields:
                raise DeviceError(400, f"no such column: {name}")
        for name in reversed(order or []):
            rows.sort(key=_nulls_last(name))
        start = offset if isinstance(offset, int) and offset > 0 else 0
        rows = rows[start:]
        if isinstance(limit, int) and limit >= 0:
            rows = rows[:limit]
        if fields:
            unknown = [f for f in fields if f not in table.fields]
            if unknown:
                raise DeviceError(400, f"no such column: {unknown[0]}")
            rows = [{f: r.get(f) for f in fields} for r in rows]
        return rows
