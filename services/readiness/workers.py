"""Readiness lines for workers: each required domain started, each of its queues polled."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from services.worker.domains import PolledQueue, domain_finding_key, polled_queues
from shared.db.models import Instance, PipelineState, as_utc, utcnow
from shared.findings import read_findings
from shared.readiness import Probe
from shared.settings import Settings

# An idle long poll is answered after about a minute and polled again at once: a poller
# Temporal last saw longer ago than this is gone (Temporal lists it for a while after).
LONG_POLL_WINDOW = timedelta(seconds=75)
DESCRIBE_TIMEOUT = timedelta(seconds=2)


@dataclass(frozen=True)
class Poller:
    """A poller as Temporal lists it."""

    identity: str
    last_access: datetime


def worker_probes(settings: Settings, sessions: async_sessionmaker[AsyncSession],
                  client: Callable[[], Awaitable[Client]]) -> list[Probe]:
    """`domain:<d>` and `worker-poller:<queue>` for each domain in Readiness:WorkerDomains."""
    probes: list[Probe] = []
    for domain in settings.readiness.worker_domains:
        probes.append(_domain_probe(domain, sessions))
        probes += [_finding_probe(key, sessions) for key in DOMAIN_FINDINGS.get(domain, ())]
        probes += [_poller_probe(queue, settings, sessions, client)
                   for queue in polled_queues(settings) if queue.domain == domain]
    return probes


# Findings a domain's worker records at boot beside its `domain:<d>` line.
DOMAIN_FINDINGS = {"sisbajud": ("sisbajud:connections",)}


def _finding_probe(key: str, sessions: async_sessionmaker[AsyncSession]) -> Probe:
    async def run() -> tuple[bool, str]:
        finding = (await read_findings(sessions, [key])).get(key)
        if finding is None:
            return True, "not checked yet (the worker checks at boot)"
        return finding.ok, finding.detail

    return Probe(key, run)


def _domain_probe(domain: str, sessions: async_sessionmaker[AsyncSession]) -> Probe:
    async def run() -> tuple[bool, str]:
        key = domain_finding_key(domain)
        finding = (await read_findings(sessions, [key])).get(key)
        if finding is None:
            return True, "no worker has reported on it yet (its pollers are checked apart)"
        return finding.ok, finding.detail

    return Probe(f"domain:{domain}", run)


def _poller_probe(queue: PolledQueue, settings: Settings,
                  sessions: async_sessionmaker[AsyncSession],
                  client: Callable[[], Awaitable[Client]]) -> Probe:
    stale = timedelta(seconds=settings.readiness.poller_stale_seconds)
    # After a resume the pause gate starts the signing worker within one poll of the row.
    grace = timedelta(seconds=settings.pipeline.poll_interval_seconds * 2) + stale

    async def run() -> tuple[bool, str]:
        live = await live_pollers(await client(), sessions, queue.name, stale)
        if live:
            return True, f"{len(live)} live poller(s): {', '.join(live)}"
        if queue.pausable:
            async with sessions() as session:
                state = await session.get(PipelineState, 1)
            if state is not None and state.paused:
                return True, "pipeline paused: the signing worker polls again on resume"
            # Version 0: the row as the migration wrote it, never resumed.
            if state is not None and state.version > 0 \
                    and utcnow() - as_utc(state.changed_at) <= grace:
                return True, "pipeline just resumed: the signing worker is starting"
        return False, f"no live worker polls {queue.name} (domain {queue.domain})"

    return Probe(f"worker-poller:{queue.name}", run)


async def live_pollers(client: Client, sessions: async_sessionmaker[AsyncSession],
                       queue: str, stale: timedelta) -> list[str]:
    """Identities of the queue's pollers whose worker process is still alive.

    A poller of one of our workers (identity `<instance id>:<queue>`) counts while its
    instance row is running and fresh; another poller while Temporal saw it recently.
    """
    now = utcnow()
    pollers = [p for p in await queue_pollers(client, queue)
               if now - p.last_access <= LONG_POLL_WINDOW]
    owners = {p.identity: _instance_of(p.identity, queue) for p in pollers}
    async with sessions() as session:
        rows = {row.instance_id: row for row in (await session.exec(select(Instance).where(
            Instance.instance_id.in_([o for o in owners.values() if o])))).all()}
    live = []
    for poller in pollers:
        row = rows.get(owners[poller.identity] or "")
        if row is None or (row.state == "running"
                           and now - as_utc(row.last_seen_at) <= stale):
            live.append(poller.identity)
    return sorted(set(live))


async def queue_pollers(client: Client, queue: str) -> list[Poller]:
    """Workflow and activity pollers Temporal lists for `queue`."""
    found: list[Poller] = []
    for queue_type in (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
                       TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY):
        response = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(namespace=client.namespace, task_queue=TaskQueue(name=queue),
                                     task_queue_type=queue_type),
            retry=True, timeout=DESCRIBE_TIMEOUT)
        found += [Poller(p.identity, p.last_access_time.ToDatetime(UTC))
                  for p in response.pollers]
    return found


def _instance_of(identity: str, queue: str) -> str | None:
    suffix = f":{queue}"
    return identity[: -len(suffix)] if identity.endswith(suffix) else None
