"""Schemathesis over every operation of the published OpenAPI document: no 5xx, on both stores.

The real app is served by uvicorn on loopback (bootstrapped store, the session's Temporal dev
server) and the `st` CLI runs against `/api/openapi.json` with the API key.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from services.app import create_app
from tests.api.conftest import API_KEY, make_context
from tests.support.pickup import serve

# Random cases per operation; with a fixed seed a run is reproducible (`st run --seed`).
MAX_EXAMPLES = 6
SEED = 20261129
# The coverage phase (boundary values, NUL bytes, undeclared content types) runs once, on the
# stricter store; random fuzzing runs on both. Together ~30-60 s on two cores.
PHASES = {"postgres": "coverage,fuzzing", "sqlite": "fuzzing"}
# Server-sent event streams answer 200 and never end; configuring a turnstile Monitor answers
# 503 pickup.turnstile-unavailable by contract when no controller is reachable.
EXCLUDED = r"/(board|guardian)/events$|/turnstile/monitor$"
ST = Path(sys.executable).with_name("st")


async def test_no_operation_answers_with_a_server_error(settings, backend, temporal_env,
                                                        tmp_path):
    settings.pipeline.task_queue_suffix = "-schemathesis"
    context = await make_context(settings, temporal_env)
    report = tmp_path / "schemathesis.txt"
    try:
        async with serve(create_app(context)) as base_url:
            process = await asyncio.create_subprocess_exec(
                str(ST), "run", f"{base_url}/api/openapi.json",
                "--checks", "not_a_server_error", "--phases", PHASES[backend],
                "--max-examples", str(MAX_EXAMPLES), "--seed", str(SEED), "--workers", "1",
                "--header", f"X-API-Key: {API_KEY}", "--request-timeout", "20",
                "--exclude-path-regex", EXCLUDED, "--suppress-health-check", "all",
                "--no-color", cwd=tmp_path, env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
                stdout=report.open("wb"), stderr=asyncio.subprocess.STDOUT)
            await process.wait()
    finally:
        await context.engine.dispose()
    assert process.returncode == 0, report.read_text(errors="replace")[-20000:]
