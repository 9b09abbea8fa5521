"""Reading Temporal's history as stored, to prove personal data never sits there in clear."""

from __future__ import annotations

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryRequest
from temporalio.client import Client

from shared.payload_codec import ENCODING
from shared.settings import Settings
from shared.temporal import data_converter


def encrypting_client(client: Client, settings: Settings) -> Client:
    """`client`'s connection with the data converter every process of ours uses."""
    return Client(**{**client.config(), "data_converter": data_converter(settings)})


async def raw_history(client: Client, workflow_id: str) -> bytes:
    """Every event of the workflow's history as Temporal stores it, not decoded."""
    request = GetWorkflowExecutionHistoryRequest(
        namespace=client.namespace, execution=WorkflowExecution(workflow_id=workflow_id))
    events, token = b"", b""
    while True:
        request.next_page_token = token
        response = await client.workflow_service.get_workflow_execution_history(request)
        events += response.history.SerializeToString()
        if not (token := response.next_page_token):
            return events


def assert_sealed(raw: bytes, clear: tuple[str, ...], what: str) -> None:
    """The history carries encrypted payloads and none of the `clear` values."""
    assert ENCODING in raw, f"{what}: no encrypted payload in the history"
    for value in clear:
        assert value.encode() not in raw, f"{what}: {value!r} in clear in Temporal's history"
