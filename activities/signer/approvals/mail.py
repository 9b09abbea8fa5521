"""Approval e-mails: the request text, and draining a job's outbox rows to SMTP."""

from __future__ import annotations

import asyncio
import logging
import smtplib
import ssl
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.models.approvals import NotificationOutbox
from activities.signer.models.jobs import Job
from shared.db.models import utcnow

log = logging.getLogger("esteira.signer.approvals.mail")
SENT_BODY = None  # a sent body is dropped: it carried the approver's token


def approval_request(*, job: Job, approver: str, quorum: int, approvers: int, sha256: str,
                     expires_at: datetime | None, base_url: str, token: str
                     ) -> tuple[str, str]:
    """Subject and body of the e-mail asking one approver to decide on one job."""
    lines = [
        f"{approver},",
        "",
        f"The file {job.file_name} (profile {job.profile_name}, job {job.id}) waits for "
        f"approval before it is signed: {quorum} of {approvers} approver(s) must approve, "
        "and a single rejection stops it.",
        f"SHA-256 of the file held for signing: {sha256}",
    ]
    if expires_at is not None:
        lines.append(f"The request expires at {expires_at:%Y-%m-%d %H:%M} UTC.")
    lines += ["", "See the file and approve or reject it (a rejection needs a reason):",
              f"  {approval_link(base_url, job.id, token)}", "",
              "This link is yours alone and works only for this job: don't forward it."]
    return f"Approval needed: {job.file_name} (job {job.id})", "\n".join(lines) + "\n"


def approval_link(base_url: str, job_id: str, token: str) -> str:
    """The approver's page; the token rides in the fragment, which browsers never send."""
    return f"{base_url.rstrip('/')}/approve/{quote(job_id, safe='')}#{token}"


@dataclass(frozen=True)
class SmtpTarget:
    """Where approval e-mails go, and how the connection is protected and authenticated."""

    host: str
    port: int
    sender: str
    timeout_seconds: float = 10.0
    security: str = "none"  # none | starttls | tls (Notifications:SmtpSecurity)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: Path | None = None

    def tls_context(self) -> ssl.SSLContext:
        """Certificate and host name checked, against `ca_file` or the system's roots."""
        return ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)

    def connect(self) -> smtplib.SMTP:
        """A connection ready to send: TLS as configured, then AUTH when a user is set."""
        if self.security == "tls":
            client: smtplib.SMTP = smtplib.SMTP_SSL(self.host, self.port,
                                                    timeout=self.timeout_seconds,
                                                    context=self.tls_context())
        else:
            client = smtplib.SMTP(self.host, self.port, timeout=self.timeout_seconds)
        try:
            if self.security == "starttls":
                # Raises SMTPNotSupportedError when the server doesn't offer it: never a
                # silent fall back to clear text.
                client.starttls(context=self.tls_context())
                client.ehlo()
            if self.username is not None:
                client.login(self.username, self.password or "")
        except BaseException:
            client.close()
            raise
        return client


class OutboxDrain:
    """Sends a job's unsent e-mails, one row at a time, recording each attempt."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], smtp: SmtpTarget) -> None:
        self.sessions = sessions
        self.smtp = smtp

    async def drain(self, job_id: str) -> tuple[int, int]:
        """(sent, failed) for the job's pending rows; a failed row stays for the next try."""
        async with self.sessions() as session:
            rows = list((await session.exec(select(NotificationOutbox).where(
                NotificationOutbox.job_id == job_id, NotificationOutbox.sent_at.is_(None),
                # No body: the wait ended before it went out, and its token with it.
                NotificationOutbox.body.is_not(None))
                .order_by(NotificationOutbox.id))).all())
        sent = failed = 0
        for row in rows:
            error = None
            try:
                await asyncio.to_thread(self._send, row)
            except (OSError, smtplib.SMTPException) as exc:
                error = f"{type(exc).__name__}: {exc}"
            async with self.sessions() as session:
                values = ({"attempts": NotificationOutbox.attempts + 1, "last_error": error}
                          if error else {"attempts": NotificationOutbox.attempts + 1,
                                         "sent_at": utcnow(), "body": SENT_BODY,
                                         "last_error": None})
                await session.exec(update(NotificationOutbox)
                                   .where(NotificationOutbox.id == row.id).values(**values))
                await session.commit()
            if error:
                failed += 1
                log.warning("Approval e-mail %s for job %s not sent: %s", row.id, job_id, error)
            else:
                sent += 1
        return sent, failed

    def _send(self, row: NotificationOutbox) -> None:
        message = EmailMessage()
        message["From"] = self.smtp.sender
        message["To"] = row.to_address
        message["Subject"] = row.subject
        message.set_content(row.body or "")
        with self.smtp.connect() as client:
            client.send_message(message)
