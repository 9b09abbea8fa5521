"""A job held for approval by the real store, with the e-mails it queued (links and all)."""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.approvals.store import ApprovalStore
from activities.signer.models.approvals import NotificationOutbox
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.repository import JobRepository
from activities.signer.storage import Fingerprint

APPROVERS = [{"name": "Ana", "email": "ana@example.com"},
             {"name": "Bruno", "email": "bruno@example.com"}]
LINK = re.compile(r"(\S+/approve/\S+)#([\w-]+)")


@dataclass(frozen=True)
class Held:
    """The held job, its staged copy, and each approver's e-mail body."""

    job: Job
    staged: Path
    mails: dict[str, str]

    def link(self, approver: str) -> str:
        """The page link the approver's e-mail carries."""
        found = LINK.search(self.mails[approver])
        assert found, self.mails[approver]
        return f"{found.group(1)}#{found.group(2)}"

    def token(self, approver: str) -> str:
        """The token in the fragment of that link."""
        return self.link(approver).rsplit("#", 1)[1]


async def hold(sessions: async_sessionmaker[AsyncSession], storage_root: Path, base_url: str,
               *, file_name: str = "contrato.pdf", data: bytes, quorum: int = 2) -> Held:
    """A job Processing -> AwaitingApproval through `ApprovalStore.hold` (Ana and Bruno)."""
    job_id = str(uuid.uuid4())
    staged = storage_root / "processing" / job_id / file_name
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.write_bytes(data)
    job = Job(id=job_id, file_name=file_name, original_path=str(storage_root / job_id / file_name),
              source="upload", profile_name="aprovacao", format="Pades", status="Processing",
              folder=None)
    await JobRepository(sessions).insert(job, "test row")
    profile = SigningProfile(name="aprovacao", approval={"approvers": APPROVERS,
                                                          "quorum": quorum})
    fingerprint = Fingerprint(len(data), hashlib.sha256(data).hexdigest())
    store = ApprovalStore(sessions, base_url=base_url)
    assert await store.hold(job, profile, staged, fingerprint)
    async with sessions() as session:
        rows = (await session.exec(select(NotificationOutbox).where(
            NotificationOutbox.job_id == job_id))).all()
    by_address = {a["email"]: a["name"] for a in APPROVERS}
    # Held, not sent: every row still has its body.
    return Held(job, staged, {by_address[r.to_address]: r.body for r in rows
                              if r.body is not None})
