"""Registering the custom search attributes: dev-server flags, or the operator service."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from typing import NoReturn

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.common import SearchAttributeIndexedValueType
from temporalio.service import RPCError, RPCStatusCode

from shared.contracts.search_attributes import REGISTERED
from shared.settings import Settings
from shared.temporal import connect

log = logging.getLogger("esteira.search-attributes")
# `esteira migrate` may start beside a Temporal server that is still coming up (compose).
CONNECT_WAIT_SECONDS = 120.0
CONNECT_RETRY_SECONDS = 2.0
EXIT_FAILED = 1


class SearchAttributeConflictError(RuntimeError):
    """A name we need is registered with another type: only an operator can sort that out."""


def dev_server_flags() -> list[str]:
    """`--search-attribute Name=Type` for each attribute (the dev server registers them)."""
    flags: list[str] = []
    for key in REGISTERED:
        flags += ["--search-attribute", f"{key.name}={_type_name(key.indexed_value_type)}"]
    return flags


async def ensure_registered(client: Client, namespace: str) -> list[str]:
    """Add the attributes the namespace lacks (idempotent); return the names added."""
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace))
    wanted = {key.name: key.indexed_value_type.value for key in REGISTERED}
    conflicts = [f"{name} is {IndexedValueType.Name(listed.custom_attributes[name])}, "
                 f"expected {IndexedValueType.Name(kind)}"
                 for name, kind in wanted.items()
                 if name in listed.custom_attributes and listed.custom_attributes[name] != kind]
    if conflicts:
        raise SearchAttributeConflictError(
            f"Search attributes of namespace {namespace} conflict: {'; '.join(conflicts)}")
    missing = {name: kind for name, kind in wanted.items()
               if name not in listed.custom_attributes}
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(namespace=namespace, search_attributes=missing))
    return sorted(missing)


async def register(settings: Settings) -> int:
    """`esteira migrate`'s step: register on the configured namespace; an exit code."""
    namespace = settings.temporal.namespace
    try:
        client = await _connect(settings)
        added = await ensure_registered(client, namespace)
    except SearchAttributeConflictError as exc:
        log.critical("%s", exc)
        return EXIT_FAILED
    except RPCError as exc:
        if exc.status in (RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNIMPLEMENTED):
            # Temporal Cloud and locked-down clusters register attributes out of band.
            log.warning("Could not register search attributes on %s (%s): register them with "
                        "your cluster's tooling (%s); workflows run without them meanwhile",
                        namespace, exc.message, ", ".join(_describe()))
            return 0
        log.critical("Registering search attributes on %s failed: %s", namespace, exc.message)
        return EXIT_FAILED
    except TimeoutError as exc:
        log.critical("%s", exc)
        return EXIT_FAILED
    log.info("Search attributes on %s: %s", namespace,
             f"added {', '.join(added)}" if added else "all registered already")
    return 0


def register_and_exit(settings: Settings) -> NoReturn:
    """`esteira migrate`'s last step, then the process ends at once: one that made a Temporal
    client can abort in interpreter teardown (sdk-python#300), failing a migration Job."""
    code = asyncio.run(register(settings))
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


async def _connect(settings: Settings) -> Client:
    deadline = time.monotonic() + CONNECT_WAIT_SECONDS
    while True:
        try:
            return await connect(settings)
        except RuntimeError as exc:  # the bridge's "Failed client connect"
            if time.monotonic() >= deadline:
                raise TimeoutError(f"Temporal at {settings.temporal_address} did not answer "
                                   f"within {CONNECT_WAIT_SECONDS:g} s: {exc}") from None
            await asyncio.sleep(CONNECT_RETRY_SECONDS)


def _type_name(kind: SearchAttributeIndexedValueType) -> str:
    """`Keyword`, `Text`, ... as the CLI spells them."""
    return "".join(part.capitalize() for part in kind.name.split("_"))


def _describe() -> list[str]:
    return [f"{key.name}={_type_name(key.indexed_value_type)}" for key in REGISTERED]
