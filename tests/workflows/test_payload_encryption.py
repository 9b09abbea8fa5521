"""Payload encryption end to end: nothing personal in Temporal's history, old histories replay."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from activities.sisbajud.contracts.orders import OrderState, order_workflow_id
from services.app import create_app
from services.dev.temporal_server import find_temporal_cli
from shared.temporal import connect, data_converter
from tests.api.conftest import API_KEY, make_context
from tests.support.encryption import assert_sealed, raw_history
from tests.support.sisbajud import DOCUMENT, World, new_order_id, serve, sisbajud_settings
from workflows.ops.probe import ProbeWorkflow
from workflows.pickup import WORKFLOWS as PICKUP_WORKFLOWS
from workflows.signer.job import SigningJobWorkflow
from workflows.sisbajud.order import SisbajudOrderWorkflow
from workflows.sisbajud.tick import SisbajudTickWorkflow

HERE = Path(__file__).parent
# Distinctive values, so finding them in ciphertext by chance is out of the question.
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])
ACCOUNT = "@acct-77881"
BRANCH = "7391"
AMOUNT = "4321.87"


@SQLITE_ONLY
async def test_an_order_leaves_no_cpf_account_or_amount_in_clear(settings, task_queue,
                                                                 temporal_env):
    settings.temporal.address = temporal_env.client.service_client.config.target_host
    settings.temporal.namespace = temporal_env.client.namespace
    client = await connect(settings)  # what every process uses: encrypting in Development
    assert client.data_converter.payload_codec is not None
    world = await World(sisbajud_settings(settings, task_queue)).start()
    try:
        order_id = new_order_id()
        await world.account(ACCOUNT, "9000", branch=BRANCH)
        await world.order(order_id, amount=AMOUNT)
        async with world.worker(client):
            run = await world.execute(client, order_id)
        assert run.last_state == OrderState.RESOLVED  # the worker decoded its own payloads
        workflow_id = order_workflow_id(order_id)
        assert_sealed(await raw_history(client, workflow_id),
                      (DOCUMENT, ACCOUNT, BRANCH, AMOUNT), "the order")

        # What an operator runs, once without the codec server and once with it.
        cli = [find_temporal_cli(), "workflow", "show", "--workflow-id", workflow_id,
               "--address", settings.temporal.address, "--namespace", client.namespace,
               "--output", "json"]
        shown = subprocess.run(cli, capture_output=True, text=True, timeout=60, check=True)
        assert DOCUMENT not in shown.stdout and AMOUNT not in shown.stdout
        context = await make_context(settings, temporal_env)
        try:
            with serve(create_app(context)) as base:
                endpoint = ["--codec-endpoint", f"{base}/api/temporal-codec"]
                refused = subprocess.run([*cli, *endpoint], capture_output=True, text=True,
                                         timeout=60)
                decoded = subprocess.run([*cli, *endpoint, "--codec-auth", f"Bearer {API_KEY}"],
                                         capture_output=True, text=True, timeout=60,
                                         check=True)
        finally:
            await context.engine.dispose()
        assert refused.returncode != 0 or DOCUMENT not in _payload_texts(refused.stdout)
        texts = _payload_texts(decoded.stdout)
        assert DOCUMENT in texts and AMOUNT in texts
    finally:
        await world.close()


def _payload_texts(shown: str) -> str:
    """Every payload's data in `temporal workflow show --output json`, decoded from base64."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("data"), str) and "metadata" in node:
                found.append(base64.b64decode(node["data"]).decode(errors="replace"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(shown) if shown.strip() else {})
    return "\n".join(found)


@SQLITE_ONLY
async def test_histories_saved_before_encryption_replay_with_the_encrypting_converter(settings):
    converter = data_converter(settings)
    assert converter.payload_codec is not None
    replayer = Replayer(workflows=[SigningJobWorkflow, SisbajudOrderWorkflow,
                                   SisbajudTickWorkflow, ProbeWorkflow, *PICKUP_WORKFLOWS],
                        data_converter=converter)
    histories = sorted(HERE.rglob("histories/**/*.json"))
    assert len(histories) >= 25, "saved histories are missing"
    for path in histories:
        history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
        await replayer.replay_workflow(history)
