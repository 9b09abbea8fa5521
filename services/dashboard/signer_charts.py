"""The System page's pictures: the signer's throughput and stage latency over the last hour,
read from the jobs' own timestamps (queued, started, sent to sign, completed)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import col, select

from activities.signer.models.jobs import Job
from shared.db.engine import Sessions
from shared.db.models import as_utc, utcnow
from shared.svg_chart import Series, line_chart

WINDOW = timedelta(hours=1)
BUCKET = timedelta(minutes=5)
# A stage: its name on the chart, and the two timestamps it runs between.
STAGES = (("queued", "created_at", "started_at"),
          ("preparing", "started_at", "signing_started_at"),
          ("signing", "signing_started_at", "completed_at"))


def _bucket(moment: datetime, first: datetime) -> datetime:
    return first + BUCKET * int((moment - first) / BUCKET)


async def signer_charts(sessions: Sessions) -> list[str]:
    """Jobs finished per five minutes, and each stage's mean seconds for the jobs finished in
    those five minutes, over the last hour."""
    until = utcnow()
    first = until - WINDOW
    async with sessions() as session:
        rows = (await session.exec(select(Job.created_at, Job.started_at,
                                          Job.signing_started_at, Job.completed_at).where(
            col(Job.completed_at) >= first))).all()
    buckets = [first + n * BUCKET for n in range(int(WINDOW / BUCKET))]
    done: dict[datetime, int] = dict.fromkeys(buckets, 0)
    spent: dict[str, dict[datetime, list[float]]] = {name: {} for name, _, _ in STAGES}
    for created, started, signing, completed in rows:
        stamps = {"created_at": created, "started_at": started,
                  "signing_started_at": signing, "completed_at": completed}
        at = _bucket(as_utc(completed), first)
        done[at] = done.get(at, 0) + 1
        for name, start, end in STAGES:
            if stamps[start] is not None and stamps[end] is not None:
                seconds = (as_utc(stamps[end]) - as_utc(stamps[start])).total_seconds()
                spent[name].setdefault(at, []).append(max(seconds, 0.0))
    throughput = line_chart("signer-throughput", "Jobs finished per 5 minutes",
                            [Series("finished", [(b, float(done.get(b, 0))) for b in buckets])],
                            since=first, until=until)
    latency = line_chart("signer-latency", "Mean seconds per stage", [
        Series(name, [(b, round(sum(v) / len(v), 2)) for b in buckets
                      if (v := spent[name].get(b))]) for name, _, _ in STAGES],
        since=first, until=until, unit=" s")
    return [throughput, latency]
