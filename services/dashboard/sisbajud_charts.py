"""The SISBAJUD overview's picture: orders per execution state, hour by hour over the day."""

from __future__ import annotations

from datetime import timedelta

from activities.sisbajud.operator import SisbajudOperations
from shared.db.models import utcnow
from shared.svg_chart import Series, line_chart

DAY_HOURS = 24
HOUR = timedelta(hours=1)


async def states_chart(sisbajud: SisbajudOperations) -> str:
    """One line per execution state sent to the Mensageria: how many orders reached it in each
    hour of the last 24."""
    until = utcnow()
    first = (until - DAY_HOURS * HOUR).replace(minute=0, second=0, microsecond=0) + HOUR
    counts = await sisbajud.timeline.states_by_hour(first)
    hours = [first + n * HOUR for n in range(DAY_HOURS)]
    by_state: dict[str, dict] = {}
    for count in counts:
        by_state.setdefault(count.state, {})[count.hour] = count.orders
    series = [Series(state, [(hour, float(found.get(hour, 0))) for hour in hours])
              for state, found in sorted(by_state.items())]
    return line_chart("sisbajud-states", "Orders per execution state, per hour", series,
                      since=first, until=until, unit="")
