"""Saved histories of the pickup workflows still replay (a non-deterministic change fails)."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from workflows.pickup import WORKFLOWS

HISTORIES = Path(__file__).with_name("histories")


async def test_saved_pickup_histories_replay():
    histories = sorted(HISTORIES.glob("*.json"))
    assert {p.stem for p in histories} == {"pickup_entity_timer", "pickup_sweep", "pickup_drain"}
    replayer = Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter)
    for path in histories:
        history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
        await replayer.replay_workflow(history)
