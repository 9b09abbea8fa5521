"""The signer's workers: workflows always polled, signing gated by pause and MaxConcurrency."""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from sqlmodel import select

from activities.signer.approvals.wiring import approval_parts
from activities.signer.encryption import load_encryption_key
from activities.signer.lacuna.activities import AwaitingSignerActivities
from activities.signer.lacuna.client import LacunaClient
from activities.signer.lacuna.methods import RemoteMethods
from activities.signer.pipeline import SigningActivities
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from services.parent_death import exit_with
from services.worker.domains import DomainWorker, WorkerDeps
from shared.contracts.signer import task_queues
from shared.db.signer_models import SigningProfile
from workflows.signer.job import SigningJobWorkflow

log = logging.getLogger("esteira.signer.worker")


async def build_signer(deps: WorkerDeps) -> list[DomainWorker]:
    """Wire the signing activities with a process pool sized to the concurrency."""
    settings = deps.settings
    concurrency = await _concurrency(deps)
    # Processes, not threads: pyHanko's signing is CPU-bound Python and threads don't scale it.
    pool = ProcessPoolExecutor(max_workers=min(concurrency, os.cpu_count() or 1),
                               mp_context=multiprocessing.get_context("spawn"),
                               # A killed worker must not leave its signing processes behind.
                               initializer=exit_with, initargs=(os.getpid(),))
    deps.resources.callback(pool.shutdown, wait=True, cancel_futures=True)
    storage = StorageTree(settings.storage_root,
                          read_attempts=settings.pipeline.input_read_attempts)
    storage.ensure()
    lacuna = LacunaClient.from_settings(settings)
    deps.resources.push_async_callback(lacuna.http.aclose)
    repository = JobRepository(deps.sessions)
    checks, approvals = approval_parts(settings, repository, storage,
                                       load_encryption_key(settings))
    activities = SigningActivities(repository, storage, pool, checks=checks,
                                   instance_id=deps.instance_id,
                                   encryption_key=load_encryption_key(settings),
                                   remote=RemoteMethods(lacuna) if settings.signer.configured
                                   else None)
    # The AwaitingSigner wait runs on the jobs queue: pausing must not strand remote work.
    awaiting = AwaitingSignerActivities(activities, lacuna, settings.signer)
    jobs_queue, signing_queue = task_queues(settings.pipeline.task_queue_suffix)
    return [
        DomainWorker(jobs_queue, workflows=[SigningJobWorkflow], unsandboxed=True,
                     activities=[awaiting.check, awaiting.finish, awaiting.cancel_remote,
                                 # Approval steps: a paused pipeline still expires and vetoes.
                                 *approvals.all()]),
        DomainWorker(signing_queue, activities=[activities.process_job],
                     max_concurrent_activities=concurrency, pausable=True),
    ]


async def _concurrency(deps: WorkerDeps) -> int:
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
