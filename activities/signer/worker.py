"""What the signer runs on a worker: job workflows always polled, signing gated by pause."""

from __future__ import annotations

import logging
import os

from sqlmodel import select

from activities.signer import engine
from activities.signer.approvals.wiring import approval_parts
from activities.signer.archive import ArchiveActivities, ArchiveRegistry
from activities.signer.archive_schedule import ensure_archive_schedule
from activities.signer.contracts.jobs import task_queues
from activities.signer.encryption import load_encryption_key
from activities.signer.health_reporter import ProfileHealthReporter
from activities.signer.key_files import allowed_key_directories
from activities.signer.lacuna.activities import AwaitingSignerActivities
from activities.signer.lacuna.client import LacunaClient
from activities.signer.lacuna.methods import RemoteMethods
from activities.signer.metrics import PIPELINE_PAUSED
from activities.signer.models.jobs import SigningProfile
from activities.signer.pipeline import SigningActivities
from activities.signer.repository import JobRepository
from activities.signer.signing_pool import signing_pool, start_all
from activities.signer.storage import StorageTree
from shared.worker_shape import DomainWorker, WorkerDeps
from workflows.signer.archive import ArchiveRenewalWorkflow
from workflows.signer.job import SigningJobWorkflow

log = logging.getLogger("esteira.signer.worker")


async def build(deps: WorkerDeps) -> list[DomainWorker]:
    """The jobs queue and the pause-gated signing queue; profile health checks beside them."""
    # Only deployment configuration names code this process may load.
    engine.allow_pkcs11_modules(deps.settings.signing.pkcs11_modules)
    engine.allow_key_directories(allowed_key_directories(deps.settings))
    workers = await _workers(deps)
    deps.background.append(
        ProfileHealthReporter(deps.settings, deps.sessions, deps.instance_id).run)
    return workers


async def _workers(deps: WorkerDeps) -> list[DomainWorker]:
    """Wire the signing activities with a process pool sized to the concurrency."""
    settings = deps.settings
    concurrency = await max_concurrency(deps)
    size = min(concurrency, os.cpu_count() or 1)
    pool = signing_pool(size, deps.pool_initializer, await enabled_profiles(deps))
    deps.resources.callback(pool.shutdown, wait=True, cancel_futures=True)
    # Warmed before the signing queue is polled (and readiness says so): the first jobs
    # neither wait on nor pay for the imports and the key loads.
    await start_all(pool, size)
    storage = StorageTree(settings.storage_root,
                          read_attempts=settings.pipeline.input_read_attempts)
    storage.ensure()
    lacuna = LacunaClient.from_settings(settings)
    deps.resources.push_async_callback(lacuna.http.aclose)
    repository = JobRepository(deps.sessions)
    archive = ArchiveRegistry(deps.sessions, settings.storage_root)
    checks, approvals = approval_parts(settings, repository, storage,
                                       load_encryption_key(settings))
    activities = SigningActivities(repository, storage, pool, checks=checks,
                                   instance_id=deps.instance_id,
                                   encryption_key=load_encryption_key(settings),
                                   remote=RemoteMethods(lacuna) if settings.signer.configured
                                   else None, archive=archive)
    renewal = ArchiveActivities(archive, pool, deps.instance_id)
    # The AwaitingSigner wait runs on the jobs queue: pausing must not strand remote work.
    awaiting = AwaitingSignerActivities(activities, lacuna, settings.signer)
    jobs_queue, signing_queue = task_queues(settings.pipeline.task_queue_suffix)
    # Beside the pollers, not before them: a Temporal that answers late delays nothing else.
    deps.background.append(lambda stop: ensure_archive_schedule(settings, jobs_queue, stop))
    return [
        # A stood-down instance polls nothing at the Lacuna Signer: the jobs queue stands
        # down too (another instance's poller runs these workflows meanwhile).
        DomainWorker(jobs_queue, workflows=[SigningJobWorkflow, ArchiveRenewalWorkflow],
                     unsandboxed=True, stands_down=True,
                     activities=[awaiting.check, awaiting.finish, awaiting.cancel_remote,
                                 # Approval steps: a paused pipeline still expires and vetoes.
                                 *approvals.all(),
                                 # Archive renewal: its own schedule pauses it, not the pipeline.
                                 renewal.due, renewal.renew]),
        DomainWorker(signing_queue, activities=[activities.process_job],
                     max_concurrent_activities=concurrency, pausable=True,
                     on_pause_read=show_paused),
    ]


def show_paused(paused: bool) -> None:
    """The pause gauge follows what the signing queue's gate last read."""
    PIPELINE_PAUSED.set(1 if paused else 0)


async def max_concurrency(deps: WorkerDeps) -> int:
    """`Pipeline:MaxConcurrency`, forced to 1 when a profile signs through PKCS#11."""
    wanted = deps.settings.pipeline.max_concurrency
    async with deps.sessions() as session:
        tokens = (await session.exec(select(SigningProfile.name).where(
            SigningProfile.cert_source == "pkcs11", SigningProfile.enabled))).all()
    if tokens and wanted > 1:
        log.warning("Pipeline:MaxConcurrency=%s lowered to 1: profile(s) %s sign through "
                    "PKCS#11, whose sessions don't sign in parallel", wanted, ", ".join(tokens))
        return 1
    return wanted


async def enabled_profiles(deps: WorkerDeps) -> list[SigningProfile]:
    """The enabled profiles, whose keys the signing pool opens ahead."""
    async with deps.sessions() as session:
        return list((await session.exec(select(SigningProfile).where(
            SigningProfile.enabled))).all())
