"""A run started with search attributes on a worker that never upserted still replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from temporalio.api.common.v1 import SearchAttributes
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import encode_search_attributes
from temporalio.worker import Replayer

from shared.contracts import search_attributes
from workflows.signer.job import SigningJobWorkflow
from workflows.sisbajud.order import SisbajudOrderWorkflow

HERE = Path(__file__).parent


def _with_start_attributes(path: Path, attributes) -> WorkflowHistory:
    """A saved history as if its starter had set `attributes` (a rolling deploy: the new
    starter, the old worker) — the current code must not upsert where the old one didn't."""
    events = json.loads(path.read_text())
    encoded = SearchAttributes()
    encode_search_attributes(attributes, encoded)
    started = events["events"][0]["workflowExecutionStartedEventAttributes"]
    started["searchAttributes"] = MessageToDict(encoded)
    return WorkflowHistory.from_json(path.stem, events)


@pytest.mark.parametrize(("history", "workflow", "attributes"), [
    ("signer/histories/signer_job_approval.json", SigningJobWorkflow,
     search_attributes.signer_job(file_name="a.pdf", profile="default", status="Queued")),
    ("sisbajud/histories/sisbajud_order_block.json", SisbajudOrderWorkflow,
     search_attributes.sisbajud_order("order-1")),
    ("sisbajud/histories/sisbajud_order_held_resolved.json", SisbajudOrderWorkflow,
     search_attributes.sisbajud_order("order-1")),
])
async def test_runs_without_the_patch_marker_replay_without_upserts(history, workflow,
                                                                     attributes):
    replayer = Replayer(workflows=[workflow], data_converter=pydantic_data_converter)
    await replayer.replay_workflow(_with_start_attributes(HERE / history, attributes))


async def test_runs_that_upserted_replay():
    # Recorded from the visibility tests: patch marker, upserts, memo change.
    replayer = Replayer(workflows=[SigningJobWorkflow, SisbajudOrderWorkflow],
                        data_converter=pydantic_data_converter)
    for history in ("signer/histories/signer_job_search_attributes.json",
                    "sisbajud/histories/sisbajud_order_search_attributes.json"):
        path = HERE / history
        await replayer.replay_workflow(
            WorkflowHistory.from_json(path.stem, json.loads(path.read_text())))
