"""Saved SISBAJUD histories still replay: a change that would break running orders fails."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from workflows.sisbajud.order import SisbajudOrderWorkflow
from workflows.sisbajud.tick import SisbajudTickWorkflow

HISTORIES = Path(__file__).with_name("histories")


async def test_saved_histories_still_replay():
    histories = sorted(HISTORIES.glob("*.json"))
    assert len(histories) >= 13, "saved histories are missing"
    replayer = Replayer(workflows=[SisbajudOrderWorkflow, SisbajudTickWorkflow],
                        data_converter=pydantic_data_converter)
    for path in histories:
        history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
        await replayer.replay_workflow(history)
