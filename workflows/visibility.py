"""Upserting the search attributes that change while a workflow runs."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

with workflow.unsafe.imports_passed_through():
    from shared.contracts.search_attributes import PATCH_ID, summary_memo


def publish(anchor: SearchAttributeKey[Any], *updates: SearchAttributeUpdate[Any],
            summary: str | None = None) -> None:
    """Upsert `updates` (and the memo's summary) when the run started with `anchor` set.

    No anchor means the starter found the attributes unregistered (an upsert would then fail
    every workflow task) or predates them; the patch keeps histories of runs whose worker
    never upserted replaying.
    """
    if workflow.info().typed_search_attributes.get(anchor) is None:
        return
    if not workflow.patched(PATCH_ID):
        return
    workflow.upsert_search_attributes(list(updates))
    if summary is not None:
        workflow.upsert_memo(summary_memo(summary))
