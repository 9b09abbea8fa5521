"""The pickup API's answers as models (rows as they are dumped), for the OpenAPI document."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from activities.pickup.models import (
    AuditEntry,
    AuthorizedPerson,
    EarlyRelease,
    Guardian,
    GuardianLink,
    LedgerEntry,
    Notification,
    School,
    Student,
)
from services.api.row_answers import page_answer, row_answer

SchoolAnswer = row_answer(School)
StudentAnswer = row_answer(Student)
GuardianAnswer = row_answer(Guardian)
LinkAnswer = row_answer(GuardianLink)
PersonAnswer = row_answer(AuthorizedPerson)
ReleaseAnswer = row_answer(EarlyRelease)
NotificationAnswer = row_answer(Notification)
LedgerEntryAnswer = row_answer(LedgerEntry, age_seconds=float)
StudentPage = page_answer(StudentAnswer)
GuardianPage = page_answer(GuardianAnswer)
LinkPage = page_answer(LinkAnswer)
PersonPage = page_answer(PersonAnswer)
StudentList: Any = list[StudentAnswer]  # type: ignore[valid-type]
AuditList: Any = list[row_answer(AuditEntry)]  # type: ignore[misc]


class Board(BaseModel):
    """`GET /schools/{id}/board`: the school and every student with state and version."""

    school: SchoolAnswer  # type: ignore[valid-type]
    students: list[StudentAnswer]  # type: ignore[valid-type]


class Ledger(BaseModel):
    """`GET /ledger`: outbound commands and the backlog's totals."""

    pending: int
    failed: int
    oldest_pending_seconds: float | None
    entries: list[LedgerEntryAnswer]  # type: ignore[valid-type]


class IssuedToken(BaseModel):
    """A guardian-app access token, shown this once."""

    token: str
    id: int
    guardian_id: int
    expires_at: str
