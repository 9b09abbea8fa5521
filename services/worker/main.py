"""Run Temporal workers for the chosen domains until SIGINT/SIGTERM."""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta

from temporalio.worker import Worker

from services.process import connect_when_available, stop_event
from services.worker.domains import build
from shared.db.engine import create_engine, session_factory
from shared.instances import registered_instance
from shared.logs import props
from shared.metrics import bridged_runtime
from shared.settings import Settings

# In-flight activities get this long to finish on stop before Temporal retries them elsewhere.
GRACEFUL_SHUTDOWN = timedelta(seconds=30)
log = logging.getLogger("esteira.worker")


async def run_worker(settings: Settings, domains: list[str]) -> None:
    """Poll every task queue of `domains` until told to stop."""
    stop = stop_event()
    engine = create_engine(settings.sqlalchemy_url)
    try:
        async with bridged_runtime() as runtime:
            client = await connect_when_available(settings, stop, runtime)
            if client is None:
                return
            async with registered_instance(session_factory(engine), "worker"), \
                    contextlib.AsyncExitStack() as stack:
                for domain_worker in build(domains, settings):
                    worker = Worker(
                        client,
                        task_queue=domain_worker.task_queue,
                        workflows=domain_worker.workflows,
                        activities=domain_worker.activities,
                        max_concurrent_activities=domain_worker.max_concurrent_activities,
                        graceful_shutdown_timeout=GRACEFUL_SHUTDOWN,
                    )
                    await stack.enter_async_context(worker)
                    log.info("Worker polling %s", domain_worker.task_queue,
                             extra=props(TaskQueue=domain_worker.task_queue))
                log.info("Worker started for domains %s", ",".join(domains),
                         extra=props(Domains=domains))
                await stop.wait()
                log.info("Worker stopping; in-flight activities get %ss",
                         int(GRACEFUL_SHUTDOWN.total_seconds()))
    finally:
        await engine.dispose()
