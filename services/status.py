"""`esteira status`: what is running, queue sizes, the pause state."""

from __future__ import annotations

import sys
from datetime import timedelta

import httpx
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from activities.signer.operator import ClusterView, SignerOperations
from services.composition import compose
from services.readiness.workers import worker_probes
from services.worker.domains import polled_queues
from shared.db.engine import create_engine, describe_store, session_factory
from shared.db.models import as_utc, utcnow
from shared.readiness import evaluate
from shared.settings import Settings
from shared.temporal import TemporalHandle
from shared.version import full_version

QUERY_TIMEOUT = timedelta(seconds=3)


async def print_status(settings: Settings) -> int:
    """Print a status report; exit code 1 when the API isn't ready or a part is unreachable."""
    out: list[str] = [f"Esteira {full_version()} — data dir {settings.data_dir.resolve()}"]
    engine = create_engine(settings.sqlalchemy_url)
    try:
        signer = compose(settings, session_factory(engine),
                         TemporalHandle.for_settings(settings)).signer
        healthy = await _api_line(settings, out)
        healthy &= await _store_lines(signer, out)
        healthy &= await _temporal_lines(signer, out)
    finally:
        await engine.dispose()
    print("\n".join(out), file=sys.stdout, flush=True)
    return 0 if healthy else 1


async def _api_line(settings: Settings, out: list[str]) -> bool:
    url = f"http://{settings.host}:{settings.ports.api}/api/ready"
    try:
        async with httpx.AsyncClient(timeout=3) as http:
            response = await http.get(url)
    except httpx.HTTPError as exc:
        out.append(f"REST API      {url}: not answering ({type(exc).__name__})")
        return False
    checks = ", ".join(f"{c['name']} {'ok' if c['ok'] else 'FAILING'}"
                       for c in response.json().get("checks", []))
    out.append(f"REST API      {url}: {response.json().get('status')} ({checks})")
    return response.status_code == 200


async def _store_lines(signer: SignerOperations, out: list[str]) -> bool:
    settings = signer.settings
    try:
        state = await signer.pipeline.state()
        processes = await signer.instances.processes()
        jobs = await signer.jobs.status_counts()
        cluster = await signer.instances.cluster()
    except Exception as exc:
        out.append(f"Store         {describe_store(settings.sqlalchemy_url)}: unreachable ({exc})")
        return False
    instances = [row for row in processes.rows if row.state == "running"]
    pipeline = (f"paused since {state.changed_at:%Y-%m-%d %H:%M:%S}Z by {state.changed_by}: "
                f"{state.reason}" if state.paused else "running")
    out.append(f"Store         {describe_store(settings.sqlalchemy_url)}")
    out.append(f"Pipeline      {pipeline}")
    counts = ", ".join(f"{status} {count}" for status, count in sorted(jobs.items())) or "none"
    out.append(f"Signer jobs   {counts}")
    out.append("Processes     role     pid      host                 last seen")
    stale = timedelta(seconds=settings.cluster.stale_after_seconds)
    for row in sorted(instances, key=lambda r: (r.role, r.pid)):
        seen = utcnow() - as_utc(row.last_seen_at)
        flag = "" if seen <= stale else "  (silent: likely dead)"
        out.append(f"              {row.role:<8} {row.pid:<8} {row.host:<20} "
                   f"{int(seen.total_seconds())}s ago{flag}")
    if not instances:
        out.append("              (none running)")
    out += instance_lines(cluster)
    return True


def instance_lines(cluster: ClusterView) -> list[str]:
    """The cluster's instances: state, versions, last signal, stand-downs, the version alarm."""
    mode = "cluster mode" if cluster.enabled else "cluster mode off"
    lines = [f"Instances     ({mode}; this is {cluster.me}; no signal after "
             f"{cluster.stale_after_seconds}s)",
             "              name                 state      version              last seen"]
    now = utcnow()
    for view in cluster.instances:
        held = f"  STOOD DOWN by {view.changed_by}" if view.stood_down else ""
        seen = int((now - view.last_seen_at).total_seconds())
        lines.append(f"              {view.name:<20} {view.state.value:<10} "
                     f"{','.join(view.versions):<20} {seen}s ago{held}")
    if cluster.version_mix:
        lines.append("ALARM         mixed versions across live instances: "
                     + ", ".join(cluster.version_mix))
    return lines


async def _temporal_lines(signer: SignerOperations, out: list[str]) -> bool:
    settings = signer.settings
    try:
        client = await signer.temporal()
    except Exception as exc:
        out.append(f"Temporal      {settings.temporal_address}: unreachable ({exc})")
        return False
    out.append(f"Temporal      {settings.temporal_address} namespace {settings.temporal.namespace}")
    out.append("Task queues   queue                      backlog  pollers")
    for queue in polled_queues(settings):
        backlog, pollers = await _queue_stats(client, queue.name)
        out.append(f"              {queue.name:<26} {backlog:<8} {pollers}")
    return await _worker_lines(signer, out)


async def _worker_lines(signer: SignerOperations, out: list[str]) -> bool:
    """The gating worker checks of /api/ready, judged here too (the API may be down)."""
    settings = signer.settings
    verdict = await evaluate(worker_probes(settings, signer.sessions, signer.temporal))
    for check in verdict.checks:
        if not check.ok:
            out.append(f"Workers       FAILING {check.name}: {check.detail}")
    if verdict.checks and verdict.ready:
        out.append(f"Workers       ready ({', '.join(settings.readiness.worker_domains)})")
    return verdict.ready


async def _queue_stats(client: Client, task_queue: str) -> tuple[int, int]:
    backlog = pollers = 0
    for queue_type in (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
                       TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY):
        response = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(namespace=client.namespace,
                                     task_queue=TaskQueue(name=task_queue),
                                     task_queue_type=queue_type, report_stats=True),
            retry=True, timeout=QUERY_TIMEOUT,
        )
        backlog += response.stats.approximate_backlog_count
        pollers = max(pollers, len(response.pollers))
    return backlog, pollers
