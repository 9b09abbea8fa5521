"""Run Temporal workers for the chosen domains until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Sequence
from datetime import timedelta
from functools import partial

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client
from temporalio.worker import Interceptor, UnsandboxedWorkflowRunner, Worker

from services.ops_server import OpsServer, domain_probe
from services.parent_death import exit_with
from services.process import connect_when_available, stop_event
from services.worker.domains import build
from services.worker.gate import PauseGatedWorker
from services.worker.stand_down import StandDownRefusal
from shared.db.engine import create_engine, session_factory
from shared.instances import cluster_instance_name, instance_id, registered_instance
from shared.logs import props
from shared.metrics import bridged_runtime
from shared.readiness import store_probe
from shared.settings import Settings
from shared.worker_shape import DomainWorker, WorkerDeps

# In-flight activities get this long to finish on stop before Temporal retries them elsewhere.
GRACEFUL_SHUTDOWN = timedelta(seconds=30)
# A pause drains: a job being signed runs to its end rather than being cut and failed.
PAUSE_DRAIN = timedelta(minutes=10)
log = logging.getLogger("esteira.worker")


async def run_worker(settings: Settings, domains: list[str]) -> None:
    """Poll every task queue of `domains` until told to stop."""
    stop = stop_event()
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    try:
        async with OpsServer(settings, "worker") as ops, bridged_runtime() as runtime, \
                contextlib.AsyncExitStack() as resources:
            ops.watch(store_probe(engine))
            client = await connect_when_available(settings, stop, runtime)
            if client is None:
                return
            ops.watch_temporal(client)
            ident = await resources.enter_async_context(registered_instance(
                sessions, "worker", settings.cluster))
            deps = worker_deps(settings, sessions, ident, resources)
            gated: list[PauseGatedWorker] = []
            built: list[DomainWorker] = []
            for domain in domains:
                mine = await build([domain], deps)
                # A domain that could not start makes this process unready, not the others.
                ops.watch(domain_probe(domain, bool(mine)))
                built += mine
            for domain_worker in built:
                gate = gate_for(client, sessions, settings, domain_worker)
                if gate is not None:
                    gated.append(gate)
                else:
                    await resources.enter_async_context(make_worker(client, domain_worker))
                log.info("Worker serving %s", domain_worker.task_queue,
                         extra=props(TaskQueue=domain_worker.task_queue,
                                     Pausable=domain_worker.pausable))
            ops.started()
            log.info("Worker started for domains %s", ",".join(domains),
                     extra=props(Domains=domains))
            await asyncio.gather(stop.wait(), *(gate.run(stop) for gate in gated),
                                 *(task(stop) for task in deps.background))
            log.info("Worker stopping; in-flight activities get %ss",
                     int(GRACEFUL_SHUTDOWN.total_seconds()))
    finally:
        await engine.dispose()


def stand_down_name(settings: Settings) -> str | None:
    """The instance whose stand-down holds this worker; only cluster mode has stand-downs."""
    return cluster_instance_name(settings.cluster) if settings.cluster.enabled else None


def gate_for(client: Client, sessions: async_sessionmaker[AsyncSession], settings: Settings,
             domain_worker: DomainWorker) -> PauseGatedWorker | None:
    """The gate of a queue that stops polling on a pause or a stand-down; None: always polls."""
    follows_stand_down = domain_worker.pausable or domain_worker.stands_down
    name = stand_down_name(settings) if follows_stand_down else None
    if not domain_worker.pausable and name is None:
        return None
    refusal = [StandDownRefusal(sessions, name)] if name else []
    drain = PAUSE_DRAIN if domain_worker.pausable else GRACEFUL_SHUTDOWN
    return PauseGatedWorker(
        lambda: make_worker(client, domain_worker, drain, refusal),
        sessions, settings.pipeline.poll_interval_seconds, domain_worker.on_pause_read,
        instance=name, follows_pause=domain_worker.pausable)


def worker_deps(settings: Settings, sessions: async_sessionmaker[AsyncSession],
                ident: str, resources: contextlib.AsyncExitStack) -> WorkerDeps:
    """What this process lends the domain builders."""
    # A pool process must not outlive the worker, even one killed with -9.
    return WorkerDeps(settings, sessions, ident, resources,
                      pool_initializer=partial(exit_with, os.getpid()))


def make_worker(client: Client, domain_worker: DomainWorker,
                drain: timedelta = GRACEFUL_SHUTDOWN,
                interceptors: Sequence[Interceptor] = ()) -> Worker:
    """A Temporal worker for one domain queue; `drain` is how long in-flight work may finish."""
    return Worker(
        client,
        task_queue=domain_worker.task_queue,
        workflows=domain_worker.workflows,
        activities=domain_worker.activities,
        max_concurrent_activities=domain_worker.max_concurrent_activities,
        **({"workflow_runner": UnsandboxedWorkflowRunner()} if domain_worker.unsandboxed
           else {}),
        graceful_shutdown_timeout=drain,
        interceptors=interceptors,
        identity=f"{instance_id('worker')}:{domain_worker.task_queue}",
    )
