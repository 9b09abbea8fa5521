"""`TemporalServer:DynamicConfig` reaches the real dev server, which starts and serves with it."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
from temporalio.client import Client

from services.dev.temporal_server import dev_server_args
from shared.settings import Settings
from tests.support.ports import free_ports

START_SECONDS = 60.0


async def _connect(process: asyncio.subprocess.Process, address: str, log: Path) -> Client:
    """A client once the server answers; the server's own words if it exits first."""
    deadline = asyncio.get_running_loop().time() + START_SECONDS
    while True:
        if process.returncode is not None:
            raise AssertionError(f"the dev server exited: {log.read_text()!r}")
        try:
            return await Client.connect(address)
        except RuntimeError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.3)


async def test_the_dev_server_serves_with_a_string_a_number_and_a_flag_configured(tmp_path):
    frontend, ui = free_ports(2)
    settings = Settings(data_dir=tmp_path, ports={"temporal": frontend, "temporal_ui": ui},
                        temporal_server={"dynamic_config": {
                            # A string the CLI only takes JSON-quoted, over esteira's own value.
                            "history.timerProcessorMaxTimeShift": "50ms",
                            "history.transferProcessorMaxPollRPS": 10,
                            "system.enableEagerWorkflowStart": True}})
    log = tmp_path / "temporal.log"
    with log.open("wb") as output:  # a file, not a pipe nobody reads while the server runs
        process = await asyncio.create_subprocess_exec(
            *dev_server_args(settings), stdout=output, stderr=output)
    try:
        client = await _connect(process, f"127.0.0.1:{frontend}", log)
        info = await client.workflow_service.get_system_info(GetSystemInfoRequest())
        assert info.server_version
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await process.wait()
