"""Saved `signer-job` histories through AwaitingSigner still replay (determinism guard)."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from workflows.signer.job import SigningJobWorkflow

HISTORIES = Path(__file__).with_name("histories")


async def test_saved_awaiting_signer_histories_replay():
    histories = sorted(HISTORIES.glob("*.json"))
    assert {p.stem for p in histories} == {"signer_job_concluded_by_webhook",
                                           "signer_job_canceled_while_awaiting"}
    replayer = Replayer(workflows=[SigningJobWorkflow], data_converter=pydantic_data_converter)
    for path in histories:
        history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
        await replayer.replay_workflow(history)
