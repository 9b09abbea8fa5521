"""Running an operator's visibility query, through the SDK and through the `temporal` CLI."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

from google.protobuf.duration_pb2 import Duration
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.client import Client
from temporalio.service import RPCError

from services.dev.temporal_server import find_temporal_cli

# Visibility is eventually consistent: a query sees a start or an upsert a moment later.
DEADLINE_SECONDS = 30.0
POLL_SECONDS = 0.2


async def listed(client: Client, query: str, expected: set[str],
                 timeout: float = DEADLINE_SECONDS) -> set[str]:
    """Workflow ids `client.list_workflows(query)` returns, once they include `expected`."""
    deadline = time.monotonic() + timeout
    while True:
        found = {execution.id async for execution in client.list_workflows(query)}
        if expected <= found or time.monotonic() >= deadline:
            assert expected <= found, f"{query!r} listed {found}, not {expected}"
            return found
        await asyncio.sleep(POLL_SECONDS)


async def cli_listed(client: Client, query: str, expected: set[str],
                     timeout: float = DEADLINE_SECONDS) -> set[str]:
    """The same through `temporal workflow list --query ... -o json`, as an operator runs it."""
    deadline = time.monotonic() + timeout
    args = [find_temporal_cli(), "workflow", "list", "--query", query, "--output", "json",
            "--address", client.service_client.config.target_host,
            "--namespace", client.namespace]
    while True:
        process = await asyncio.create_subprocess_exec(
            *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate()
        assert process.returncode == 0, err.decode()
        found = {row["execution"]["workflowId"] for row in _rows(out.decode())}
        if expected <= found or time.monotonic() >= deadline:
            assert expected <= found, f"temporal workflow list {query!r} gave {found}"
            return found
        await asyncio.sleep(POLL_SECONDS)


def _rows(text: str) -> list[dict]:
    """The CLI prints one JSON array (or nothing when no workflow matches)."""
    text = text.strip()
    if not text:
        return []
    parsed = json.loads(text)
    return parsed if isinstance(parsed, list) else [parsed]


async def bare_namespace(client: Client) -> Client:
    """A client on a new namespace: no custom search attribute registered, as on an operator's
    cluster before `esteira migrate`."""
    name = f"bare-{uuid.uuid4().hex[:12]}"
    await client.workflow_service.register_namespace(RegisterNamespaceRequest(
        namespace=name, workflow_execution_retention_period=Duration(seconds=86_400)))
    bare = Client(client.service_client, namespace=name,
                  data_converter=client.data_converter)
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:  # the frontend's namespace cache learns of it a moment later
        try:
            [_ async for _ in bare.list_workflows("WorkflowType='none'")]
            return bare
        except RPCError:
            if time.monotonic() >= deadline:
                raise
            await asyncio.sleep(POLL_SECONDS)
