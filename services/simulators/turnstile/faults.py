"""Fault knobs: slow, stalled and failing `.fcgi` commands, and lost or repeated pushes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

FOREVER = -1


class Faults(BaseModel):
    """Injected misbehaviour; the defaults are a healthy device."""

    model_config = ConfigDict(extra="forbid")

    commands: list[str] = Field(
        default_factory=list,
        description="fcgi commands hit, e.g. ['destroy_objects']; empty = all except login",
    )
    when: Literal["before", "after"] = Field(
        "before", description="before: command not executed; after: executed, reply lost"
    )
    error_status: int = Field(500, ge=400, le=599)
    error_count: int = Field(0, ge=FOREVER, description="next N commands fail; -1 = until cleared")
    timeout_count: int = Field(0, ge=FOREVER, description="next N commands stall; -1 = always")
    timeout_seconds: float = Field(30.0, ge=0)
    latency_seconds: float = Field(0.0, ge=0, description="added before every hit command")
    push_drop: bool = False
    push_duplicate: bool = False


class FaultsPatch(BaseModel):
    """Body of `POST /_sim/faults`: fields to change, plus one-shot session actions."""

    model_config = ConfigDict(extra="forbid")

    commands: list[str] | None = None
    when: Literal["before", "after"] | None = None
    error_status: int | None = Field(None, ge=400, le=599)
    error_count: int | None = Field(None, ge=FOREVER)
    timeout_count: int | None = Field(None, ge=FOREVER)
    timeout_seconds: float | None = Field(None, ge=0)
    latency_seconds: float | None = Field(None, ge=0)
    push_drop: bool | None = None
    push_duplicate: bool | None = None
    expire_sessions: bool = Field(False, description="drop every live session now")
    session_ttl_seconds: float | None = Field(None, gt=0, description="idle TTL of sessions")


class FaultState:
    """The faults in force and their remaining one-shot counters."""

    def __init__(self) -> None:
        self.current = Faults()

    def apply(self, patch: FaultsPatch) -> Faults:
        """Merge the fault fields of `patch` into the faults in force."""
        changes = patch.model_dump(
            exclude_none=True, exclude={"expire_sessions", "session_ttl_seconds"}
        )
        self.current = Faults.model_validate(self.current.model_dump() | changes)
        return self.current

    def clear(self) -> None:
        """Back to a healthy device."""
        self.current = Faults()

    def hits(self, command: str) -> bool:
        """Whether the faults target `command`."""
        if self.current.commands:
            return command in self.current.commands
        return command != "login"

    def take(self) -> Literal["error", "timeout"] | None:
        """Consume one error or stall, errors first; None when neither is armed."""
        f = self.current
        if f.error_count:
            if f.error_count > 0:
                f.error_count -= 1
            return "error"
        if f.timeout_count:
            if f.timeout_count > 0:
                f.timeout_count -= 1
            return "timeout"
        return None


def command_of(path: str) -> str | None:
    """`/destroy_objects.fcgi` -> `destroy_objects`; None for non-device paths."""
    name = path.rsplit("/", 1)[-1]
    return name[: -len(".fcgi")] if name.endswith(".fcgi") else None


async def _drained(response: Response) -> Response:
    # The body must be read out so the inner app finishes before we answer differently.
    body = b"".join([chunk async for chunk in response.body_iterator])  # type: ignore[attr-defined]
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
    return Response(body, status_code=response.status_code, headers=headers)


def install(app: FastAPI, state: FaultState) -> None:
    """Wrap every `.fcgi` command with the faults in `state`."""

    @app.middleware("http")
    async def inject(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        command = command_of(request.url.path)
        if command is None or not state.hits(command):
            return await call_next(request)
        faults = state.current
        if faults.latency_seconds:
            await asyncio.sleep(faults.latency_seconds)
        kind = state.take()
        if kind is None:
            return await call_next(request)
        done = await _drained(await call_next(request)) if faults.when == "after" else None
        if kind == "timeout":
            # The client is expected to give up first; what arrives afterwards is moot.
            await asyncio.sleep(faults.timeout_seconds)
            return done or JSONResponse({"error": "simulated timeout"}, status_code=503)
        return JSONResponse({"error": "simulated fault"}, status_code=faults.error_status)
