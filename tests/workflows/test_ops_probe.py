"""The probe workflow on the real dev server, and replay of its saved history."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.common import WorkflowIDReusePolicy
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer, Worker

from activities.ops.probe import echo
from shared.contracts.ops import ProbeResult, RunProbeInput, probe_workflow_id
from workflows.ops.probe import ProbeWorkflow

HISTORIES = Path(__file__).with_name("histories")


async def test_probe_runs_one_activity_and_returns_its_result(temporal_env, task_queue):
    async with Worker(temporal_env.client, task_queue=task_queue, workflows=[ProbeWorkflow],
                      activities=[echo]):
        result = await temporal_env.client.execute_workflow(
            ProbeWorkflow.run, RunProbeInput(payload="hello"),
            id=probe_workflow_id(task_queue), task_queue=task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE, result_type=ProbeResult,
        )
    assert result.payload == "hello"
    assert result.worker_identity


async def test_saved_histories_still_replay():
    # A change to workflow code that would break running workflows fails here.
    histories = sorted(HISTORIES.glob("*.json"))
    assert histories, "no saved histories"
    replayer = Replayer(workflows=[ProbeWorkflow], data_converter=pydantic_data_converter)
    for path in histories:
        history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
        await replayer.replay_workflow(history)
