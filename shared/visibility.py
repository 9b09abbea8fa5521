"""Starting a workflow with its search attributes, and without them where none are registered."""

from __future__ import annotations

import logging
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.common import TypedSearchAttributes
from temporalio.service import RPCError, RPCStatusCode

log = logging.getLogger("esteira.visibility")
_warned = False


def is_unregistered(exc: RPCError) -> bool:
    """The namespace refused an attribute (not registered, or registered with another type)."""
    return exc.status == RPCStatusCode.INVALID_ARGUMENT and "search attribute" in str(exc).lower()


async def start_workflow(client: Client, workflow: str, arg: Any, *,
                         search_attributes: TypedSearchAttributes, memo: dict[str, Any],
                         **options: Any) -> WorkflowHandle[Any, Any]:
    """`client.start_workflow` with attributes and memo; on a cluster `esteira migrate` has not
    prepared yet, the same start without the attributes (the workflow then upserts none)."""
    try:
        return await client.start_workflow(workflow, arg, search_attributes=search_attributes,
                                           memo=memo, **options)
    except RPCError as exc:
        if not is_unregistered(exc):
            raise
        _warn_once(client.namespace, exc)
    return await client.start_workflow(workflow, arg, memo=memo, **options)


def _warn_once(namespace: str, exc: RPCError) -> None:
    global _warned
    level = logging.DEBUG if _warned else logging.WARNING
    _warned = True
    log.log(level, "Workflows start without search attributes in namespace %s (%s); run "
            "`esteira migrate` to register them", namespace, exc.message)
