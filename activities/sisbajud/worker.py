"""What the SISBAJUD executor runs on a worker: order and tick workflows, their activities."""

from __future__ import annotations

import asyncio

from temporalio.client import Client

from activities.sisbajud.connections import recheck_until_ok, record_connections, summary
from activities.sisbajud.contracts.names import stage_task_queue
from activities.sisbajud.setup import (
    activities,
    check_credentials,
    claim_institutions,
    ensure_tick_schedule,
)
from shared.http_client import pooled_client
from shared.temporal import connect
from shared.worker_shape import DomainWorker, WorkerDeps
from workflows.sisbajud.order import SisbajudOrderWorkflow
from workflows.sisbajud.tick import SisbajudTickWorkflow

# 100 connections to the Mensageria and the ledgers, all kept open between calls: keeping only
# 20 (httpx's default), under load the others were closed after each call, to open them again.
HTTP_CONNECTIONS = 100


async def build(deps: WorkerDeps) -> list[DomainWorker]:
    """Open the HTTP and Temporal clients, claim institutions, ensure the tick schedule."""
    settings = deps.settings
    check_credentials(settings)
    http = await deps.resources.enter_async_context(pooled_client(
        timeout=settings.sisbajud.http_timeout_seconds, connections=HTTP_CONNECTIONS))
    client = await connect(settings)
    await claim_institutions(deps.sessions, settings, http)
    # At boot: a wrong token URL, auth mode, subject or CRM route is named before any order;
    # after a failure, again until it passes (the systems may still be starting).
    if not summary(await record_connections(deps.sessions, settings, http,
                                            deps.instance_id))[0]:
        recheck = asyncio.create_task(recheck_until_ok(deps.sessions, settings, http,
                                                       deps.instance_id))
        deps.resources.callback(recheck.cancel)
    await ensure_tick_schedule(client, settings)

    async def temporal() -> Client:
        return client

    # Unsandboxed like the signer's: the sandbox re-imported the workflow modules for every
    # order run, a quarter of this worker's CPU (bench/sisbajud_webhook.py --profile); the
    # replay tests guard determinism.
    every = activities(settings, deps.sessions, http, temporal)
    return [DomainWorker(settings.sisbajud.task_queue,
                         workflows=[SisbajudOrderWorkflow, SisbajudTickWorkflow],
                         activities=every, unsandboxed=True),
            # The tick's stages on their own queue: the drain is not starved by the orders.
            DomainWorker(stage_task_queue(settings.sisbajud.task_queue), activities=every)]
