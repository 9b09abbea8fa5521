"""SignerFolder discovery: one job per (document, holder's flow action), registered once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from activities.signer.contracts.jobs import JobSource, JobStatus, SignerErrorCode
from activities.signer.contracts.lacuna import (
    LacunaErrorCode,
    ProfileMethod,
    signer_folder_path,
)
from activities.signer.enqueue import Enqueuer
from activities.signer.lacuna.client import LacunaClient, SignerRefused, SignerUnavailable
from activities.signer.lacuna.methods import holder_cpf
from activities.signer.models.jobs import Job, JobHistory, SigningProfile
from activities.signer.models.lacuna import SignerFolderRegistry, SignerFolderScan
from activities.signer.operator.errors import refuse
from activities.signer.profiles import format_for
from activities.signer.repository import AlreadyActiveError, JobRepository, new_job_id
from shared.db.models import utcnow
from shared.logs import props

log = logging.getLogger("esteira.signer.signer-folder")


# The registry's flow-action key of a document that has no action for the holder, and its
# states: recorded Failed once, then registered again once by the next scan that finds it.
NO_ACTION_KEY = "-"
REGISTERED, NO_ACTION, NO_ACTION_AGAIN = "Registered", "NoAction", "NoActionAgain"


@dataclass
class ScanReport:
    """What one scan of every SignerFolder profile found."""

    created: list[str] = field(default_factory=list)
    known: int = 0
    errors: list[str] = field(default_factory=list)
    # Failed jobs (signer-folder.no-action) for documents with no action for the holder.
    no_action: list[str] = field(default_factory=list)


class SignerFolderScanner:
    """Lists each SignerFolder profile's folder and registers the holder's pending actions."""

    def __init__(self, repository: JobRepository, enqueuer: Enqueuer,
                 client: LacunaClient) -> None:
        self.repository = repository
        self.enqueuer = enqueuer
        self.client = client

    async def scan(self) -> ScanReport:
        """Scan every enabled SignerFolder profile; one failing never stops the others."""
        async with self.repository.sessions() as session:
            profiles = (await session.exec(select(SigningProfile).where(
                SigningProfile.method == ProfileMethod.SIGNER_FOLDER.value,
                SigningProfile.enabled))).all()
        report = ScanReport()
        for profile in profiles:
            try:
                await self._scan_profile(profile, report)
            except SignerUnavailable as exc:
                report.errors.append(f"{profile.name}: {exc}")
                log.warning("Signer folder of profile %s not scanned: %s", profile.name, exc)
            except Exception as exc:  # a broken profile must not stop the scan of the others
                report.errors.append(f"{profile.name}: {exc!r}")
                log.exception("Signer folder of profile %s not scanned", profile.name)
        return report

    async def _scan_profile(self, profile: SigningProfile, report: ScanReport) -> None:
        folder_id = profile.signer_folder_id
        if not folder_id:
            return
        try:
            documents = await self.client.folder_documents(folder_id)
        except SignerRefused as exc:
            if exc.code != "FolderNotFound":
                raise SignerUnavailable(str(exc)) from None
            await self._record(profile.name, folder_id, False,
                               f"Signer folder {folder_id} no longer exists; bind another "
                               "folder on the profile's page")
            report.errors.append(f"{profile.name}: folder {folder_id} not found")
            return
        await self._record(profile.name, folder_id, True, f"{len(documents)} pending document(s)")
        cpf = await asyncio.to_thread(holder_cpf, profile)
        if cpf is None:
            return  # DEGRADED (no CPF): shown on /api/ready and in the banner
        for document in documents:
            if not _has_holder_action(document, cpf):
                if failed := await self._no_action(profile, folder_id, document):
                    report.no_action.append(failed)
                continue
            for action in _holder_actions(document, cpf):
                job_id = await self._register(profile, folder_id, document, action["id"])
                if job_id is None:
                    report.known += 1
                else:
                    report.created.append(job_id)
                    await self.enqueuer.start_workflow(job_id)

    async def _register(self, profile: SigningProfile, folder_id: str, document: dict,
                        action_id: str) -> str | None:
        """Registry row + Queued job in one commit; None when the pair was already taken."""
        name = document.get("filename") or document.get("name") or document["id"]
        job = Job(id=new_job_id(), file_name=name, source=JobSource.SIGNER_FOLDER.value,
                  original_path=signer_folder_path(folder_id, document["id"], action_id),
                  profile_name=profile.name, format=format_for(profile.format, name).value,
                  status=JobStatus.QUEUED.value, remote_document_id=document["id"],
                  remote_flow_action_id=action_id)
        async with self.repository.sessions() as session:
            if await session.get(SignerFolderRegistry,
                                 (profile.name, document["id"], action_id)) is not None:
                return None
            try:
                # The registry's primary key is the arbiter between racing scans.
                session.add(SignerFolderRegistry(profile_name=profile.name,
                                                 document_id=document["id"],
                                                 flow_action_id=action_id, first_job_id=job.id))
                await session.flush()
                session.add(job)
                await session.flush()
                session.add(JobHistory(job_id=job.id, to_status=job.status,
                                       message=f"Queued from Signer folder {folder_id} "
                                               f"(document {document['id']})."))
                await session.commit()
            except IntegrityError:
                await session.rollback()
                return None
        log.info("Signer document %s queued as job %s", document["id"], job.id,
                 extra=props(JobId=job.id, Profile=profile.name))
        return job.id

    async def _no_action(self, profile: SigningProfile, folder_id: str,
                         document: dict) -> str | None:
        """A Failed job (signer-folder.no-action) for a document with no action for the
        holder: on the first scan that finds it, and once more on the next one (its flow may
        have been finished since); None when both happened already."""
        name = document.get("filename") or document.get("name") or document["id"]
        key = (profile.name, document["id"], NO_ACTION_KEY)
        message = (f"Signer document {document['id']} in folder {folder_id} has no action for "
                   "the holder of this profile's certificate.")
        job = Job(id=new_job_id(), file_name=name, source=JobSource.SIGNER_FOLDER.value,
                  original_path=signer_folder_path(folder_id, document["id"], NO_ACTION_KEY),
                  profile_name=profile.name, format=format_for(profile.format, name).value,
                  status=JobStatus.FAILED.value, error_code=LacunaErrorCode.FOLDER_NO_ACTION,
                  error_message=message, remote_document_id=document["id"],
                  completed_at=utcnow())
        async with self.repository.sessions() as session:
            row = await session.get(SignerFolderRegistry, key)
            if row is not None and row.state != NO_ACTION:
                return None
            try:
                if row is None:
                    # The registry's primary key is the arbiter between racing scans.
                    session.add(SignerFolderRegistry(
                        profile_name=profile.name, document_id=document["id"],
                        flow_action_id=NO_ACTION_KEY, state=NO_ACTION, first_job_id=job.id))
                    await session.flush()
                elif (await session.exec(update(SignerFolderRegistry).where(
                        SignerFolderRegistry.profile_name == profile.name,
                        SignerFolderRegistry.document_id == document["id"],
                        SignerFolderRegistry.flow_action_id == NO_ACTION_KEY,
                        SignerFolderRegistry.state == NO_ACTION).values(
                        state=NO_ACTION_AGAIN))).rowcount != 1:
                    return None  # another scan registered it again first
                session.add(job)
                await session.flush()
                session.add(JobHistory(job_id=job.id, to_status=job.status,
                                       code=LacunaErrorCode.FOLDER_NO_ACTION, message=message))
                await session.commit()
            except IntegrityError:
                await session.rollback()
                return None
        log.warning("%s Recorded as failed job %s.", message, job.id,
                    extra=props(JobId=job.id, Profile=profile.name))
        return job.id

    async def _record(self, profile_name: str, folder_id: str, ok: bool, detail: str) -> None:
        async with self.repository.sessions() as session:
            row = await session.get(SignerFolderScan, profile_name) \
                or SignerFolderScan(profile_name=profile_name, folder_id=folder_id)
            row.folder_id, row.ok, row.detail, row.scanned_at = folder_id, ok, detail, utcnow()
            session.add(row)
            await session.commit()


def _has_holder_action(document: dict, cpf: str) -> bool:
    """Whether any action of the document's flow, whatever its step or status, is the
    holder's."""
    return any((a.get("user") or {}).get("identifier") == cpf
               for a in document.get("flowActions") or [])


def _holder_actions(document: dict, cpf: str) -> list[dict]:
    """The holder's pending actions on the document's current step."""
    actions = document.get("flowActions") or []
    pending = [a["step"] for a in actions if a.get("status") == "Pending"]
    if document.get("status") != "Pending" or not pending:
        return []
    return [a for a in actions if a.get("status") == "Pending" and a["step"] == min(pending)
            and (a.get("user") or {}).get("identifier") == cpf]


async def run_scans(scanner: SignerFolderScanner, stop: asyncio.Event, every: float,
                    held: Callable[[], bool] = lambda: False) -> None:
    """Scan every `Signer:FolderScanIntervalSeconds` until stopped; skip while `held`."""
    while not stop.is_set():
        try:
            # A stood-down instance asks the Lacuna Signer nothing.
            if not held():
                await scanner.scan()
        except Exception as exc:
            log.warning("Signer folder scan failed: %s", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)


async def retry_signer_folder_job(repository: JobRepository, enqueuer: Enqueuer, job: Job) -> str:
    """A new Queued job for the same (document, flow action); it re-reads the document."""
    if job.status not in (JobStatus.FAILED, JobStatus.CANCELED):
        raise refuse(SignerErrorCode.JOB_NOT_FAILED,
                     f"Job {job.id} is {job.status}; a Signer-folder job is retried from "
                     "Failed or Canceled.")
    retry = Job(id=new_job_id(), file_name=job.file_name, original_path=job.original_path,
                source=JobSource.RETRY.value, profile_name=job.profile_name, format=job.format,
                status=JobStatus.QUEUED.value, parent_job_id=job.id,
                remote_document_id=job.remote_document_id,
                remote_flow_action_id=job.remote_flow_action_id)
    try:
        await repository.insert(retry, f"Queued by retry of job {job.id}.")
    except AlreadyActiveError:
        raise refuse(SignerErrorCode.JOB_ALREADY_ACTIVE,
                     f"Another active job already signs {job.original_path}.") from None
    await enqueuer.start_workflow(retry.id)
    return retry.id
