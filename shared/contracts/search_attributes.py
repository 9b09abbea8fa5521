"""Custom search attributes: what an operator filters on in the Temporal UI, and the memo."""

from __future__ import annotations

from typing import Any

from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
)

# Keyword everywhere: exact matches and STARTS_WITH, which is what the queries need.
FILE_NAME = SearchAttributeKey.for_keyword("FileName")
PROFILE = SearchAttributeKey.for_keyword("Profile")
JOB_STATUS = SearchAttributeKey.for_keyword("JobStatus")
ORDER_ID = SearchAttributeKey.for_keyword("OrderId")
INSTITUTION_ID = SearchAttributeKey.for_keyword("InstitutionId")
EXECUTION_STATE = SearchAttributeKey.for_keyword("ExecutionState")
SCHOOL_ID = SearchAttributeKey.for_keyword("SchoolId")
STUDENT_ID = SearchAttributeKey.for_keyword("StudentId")

# Everything `esteira migrate` and the dev server register.
REGISTERED: tuple[SearchAttributeKey[Any], ...] = (
    FILE_NAME, PROFILE, JOB_STATUS, ORDER_ID, INSTITUTION_ID, EXECUTION_STATE, SCHOOL_ID,
    STUDENT_ID)

# Workflows started before this change (or by an older worker) never upsert: replay-safe.
PATCH_ID = "search-attributes"
SUMMARY = "summary"


def summary_memo(text: str) -> dict[str, str]:
    """The memo every workflow carries: one human sentence for the Temporal UI."""
    return {SUMMARY: text}


def signer_job(*, file_name: str, profile: str, status: str) -> TypedSearchAttributes:
    """A signing job's attributes at start (the workflow upserts `JobStatus` afterwards)."""
    return TypedSearchAttributes([SearchAttributePair(FILE_NAME, file_name),
                                  SearchAttributePair(PROFILE, profile),
                                  SearchAttributePair(JOB_STATUS, status)])


def sisbajud_order(order_id: str) -> TypedSearchAttributes:
    """An order's attributes at start (institution and state are known once it is fetched)."""
    return TypedSearchAttributes([SearchAttributePair(ORDER_ID, order_id)])


def pickup_entity(*, school_id: int | None, student_id: int | None) -> TypedSearchAttributes:
    """A pickup timer's school and student, when the transition that started it knew them."""
    pairs = [SearchAttributePair(key, str(value))
             for key, value in ((SCHOOL_ID, school_id), (STUDENT_ID, student_id))
             if value is not None]
    return TypedSearchAttributes(pairs)
