"""A school's roster from CSV: students (and their cards), guardians and links, checked whole."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from activities.pickup.errors import not_found
from activities.pickup.kick import Kicker
from activities.pickup.models import School
from activities.pickup.roster_csv import parse_roster
from activities.pickup.roster_plan import plan_roster
from activities.pickup.roster_write import write_batch
from shared.db.engine import Sessions
from shared.db.models import utcnow
from shared.settings import PickupSettings

# Between two batches the write lock is left free this long: a writer waiting on SQLite's
# busy handler polls every 100 ms at most, so it gets in within a batch or two.
BATCH_PAUSE_SECONDS = 0.05


@dataclass
class RosterReport:
    """Per line what was created, updated or left unchanged, or why it was refused."""

    dry_run: bool
    lines: list[dict[str, Any]] = field(default_factory=list)
    written: bool = False

    @property
    def refused(self) -> int:
        """How many lines were refused (found before writing: nothing was written)."""
        return sum(1 for line in self.lines if "reason" in line)

    @property
    def summary(self) -> dict[str, dict[str, int]]:
        """Per kind of record (`student`, `guardian`, `link`), how many lines did what."""
        counts: dict[str, Counter[str]] = {k: Counter() for k in ("student", "guardian", "link")}
        for line in self.lines:
            for key, counter in counts.items():
                if key in line:
                    counter[line[key]] += 1
        return {k: dict(v) for k, v in counts.items()}

    @property
    def in_order(self) -> list[dict[str, Any]]:
        """The lines' outcomes in file order."""
        return sorted(self.lines, key=lambda line: line["line"])


class _Rollback(Exception):
    """Leaves a batch's transaction without committing (a line refused at write time)."""


class RosterImport:
    """A school's roster file, checked whole, then written a batch at a time."""

    def __init__(self, sessions: Sessions, kicker: Kicker, ready_timeout: timedelta,
                 settings: PickupSettings) -> None:
        self._sessions = sessions
        self._kicker = kicker
        self._ready_timeout = ready_timeout
        self._settings = settings

    async def import_roster(self, *, school_id: int, text: str, dry_run: bool,
                            actor: str) -> RosterReport:
        """Check the whole file reading only; a refused line (or `dry_run`) writes nothing.

        Then write it `…__ROSTER_BATCH_LINES` lines per transaction, so SQLite's write lock
        is held for a batch at a time and every other writer gets in between; a line refused
        only at write time (someone changed a row meanwhile) stops there, with the earlier
        batches kept — each line is an upsert, so sending the file again finishes it.
        """
        checked, refused = parse_roster(text)
        report = RosterReport(dry_run=dry_run)
        report.lines += [{"line": r.line, "reason": r.reason} for r in refused]
        async with self._sessions() as session:
            if await session.get(School, school_id) is None:
                raise not_found("School", school_id)
            planned = await plan_roster(session, school_id, checked)
        if report.refused or dry_run or any("reason" in line for line in planned):
            report.lines += planned
            return report
        at, granted, size = utcnow(), False, self._settings.roster_batch_lines
        for start in range(0, len(checked), size):
            try:
                async with self._sessions() as session, session.begin():
                    batch = await write_batch(session, school_id=school_id,
                                              lines=checked[start:start + size], at=at,
                                              actor=actor, ready_timeout=self._ready_timeout)
                    if batch.refused:
                        raise _Rollback
            except _Rollback:
                report.lines += [o for o in batch.outcomes if "reason" in o]
                break
            report.lines += batch.outcomes
            report.written = True
            granted |= batch.granted
            await asyncio.sleep(BATCH_PAUSE_SECONDS)
        if granted:
            await self._kicker.drains({school_id})
        return report
