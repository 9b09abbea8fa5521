"""Saved approval histories of `SigningJob` still replay (a non-deterministic change fails)."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from workflows.signer.job import SigningJobWorkflow

HISTORIES = Path(__file__).with_name("histories")


async def test_saved_approval_histories_replay():
    # Quorum reached then signed; and a window that expired while the pipeline was paused.
    names = ["signer_job_approval", "signer_job_approval_expired"]
    replayer = Replayer(workflows=[SigningJobWorkflow], data_converter=pydantic_data_converter)
    for name in names:
        path = HISTORIES / f"{name}.json"
        history = WorkflowHistory.from_json(name, json.loads(path.read_text()))
        await replayer.replay_workflow(history)
