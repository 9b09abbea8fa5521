"""The probe's only activity."""

from __future__ import annotations

import os
import socket

from temporalio import activity

from shared.contracts.ops import ProbeResult, RunProbeInput


@activity.defn(name="ops-echo")
async def echo(request: RunProbeInput) -> ProbeResult:
    """Return the payload and which worker process ran it."""
    return ProbeResult(payload=request.payload,
                       worker_identity=f"{socket.gethostname()}:{os.getpid()}")
