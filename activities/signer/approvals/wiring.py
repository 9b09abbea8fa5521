"""Builds the approval parts of a signer worker from its settings."""

from __future__ import annotations

from activities.signer.approvals.activities import ApprovalActivities
from activities.signer.approvals.mail import OutboxDrain, SmtpTarget
from activities.signer.approvals.presign import PreSigningChecks
from activities.signer.approvals.store import ApprovalStore
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.settings import Settings


def smtp_target(settings: Settings) -> SmtpTarget:
    """`Notifications:Smtp*`, or the dev sink on this host."""
    notifications = settings.notifications
    password = notifications.smtp_password
    return SmtpTarget(host=notifications.smtp_host or settings.host,
                      port=notifications.smtp_port or settings.ports.smtp,
                      sender=notifications.from_address,
                      security=notifications.smtp_security,
                      username=notifications.smtp_username,
                      password=password.get_secret_value() if password else None,
                      ca_file=notifications.smtp_ca_file)


def approval_parts(settings: Settings, repository: JobRepository, storage: StorageTree,
                   encryption_key: bytes | None) -> tuple[PreSigningChecks, ApprovalActivities]:
    """The pre-signing checks of the signing activity and the approval step activities."""
    base_url = settings.notifications.public_url or f"http://{settings.host}:{settings.ports.api}"
    store = ApprovalStore(repository.sessions, base_url=base_url)
    checks = PreSigningChecks(repository, storage, encryption_key=encryption_key,
                              approvals=store)
    steps = ApprovalActivities(store, repository, storage,
                               OutboxDrain(repository.sessions, smtp_target(settings)),
                               encryption_key=encryption_key)
    return checks, steps
