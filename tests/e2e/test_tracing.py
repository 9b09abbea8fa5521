"""OpenTelemetry traces across processes: one REST request and the workflow it starts make one
trace, from the API's server span through the worker's workflow and activity spans.

The exporter is the real one (OTLP over HTTP/protobuf), sending to a receiver on loopback."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from activities.signer.contracts.names import JOB_WORKFLOW
from activities.signer.crypto.samples import make_pdf
from services.bootstrap import bootstrap
from tests.support.otlp import OtlpReceiver, ReceivedSpan
from tests.support.ports import free_ports

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
REPO = Path(__file__).resolve().parents[2]
SERVER_KIND = 2  # opentelemetry.proto.trace.v1.Span.SPAN_KIND_SERVER


@pytest.fixture
def backend() -> str:
    """Traces don't depend on the store's engine; one backend keeps this tier quick."""
    return "sqlite"


def start(settings, temporal_address: str, endpoint: str, *command: str,
          **extra: str) -> subprocess.Popen:
    env = {**{k: v for k, v in os.environ.items()
              if not k.startswith(("ESTEIRA_", "TEMPORAL_", "OTEL_"))},
           "PYTHONPATH": str(REPO), "ESTEIRA_DATA_DIR": str(settings.data_dir),
           "ESTEIRA_DATABASE_URL": settings.sqlalchemy_url,
           "ESTEIRA_API_KEY": settings.api_key.get_secret_value(),
           "ESTEIRA_PIPELINE__TASK_QUEUE_SUFFIX": settings.pipeline.task_queue_suffix,
           "ESTEIRA_PIPELINE__POLL_INTERVAL_SECONDS": "0.2",
           "ESTEIRA_LOGGING__TO_FILE": "false",
           "TEMPORAL_ADDRESS": temporal_address,
           # The collector's base URL (the exporter appends /v1/traces); batches every 200 ms.
           "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200", **extra}
    return subprocess.Popen([sys.executable, "-m", "services.cli", *command], env=env,
                            cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


async def until(what: str, predicate, *processes: subprocess.Popen, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in processes:
            assert process.poll() is None, f"a process exited ({process.returncode})"
        if (found := await predicate()) is not None:
            return found
        await asyncio.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def one(spans: list[ReceivedSpan], prefix: str = "", **fields) -> ReceivedSpan | None:
    found = [s for s in spans if s.name.startswith(prefix)
             and all(getattr(s, k) == v for k, v in fields.items())]
    return found[0] if found else None


async def test_a_rest_request_and_its_workflow_and_activities_share_one_trace(
        settings, temporal_env):
    settings.pipeline.task_queue_suffix = f"-trace-{uuid.uuid4().hex[:8]}"
    await bootstrap(settings)
    address = temporal_env.client.service_client.config.target_host
    [api_port] = free_ports(1)
    key = {"X-API-Key": settings.api_key.get_secret_value()}
    with OtlpReceiver() as receiver:
        api = start(settings, address, receiver.endpoint, "api",
                    ESTEIRA_PORTS__API=str(api_port))
        worker = start(settings, address, receiver.endpoint, "worker", "--domains", "signer")
        try:
            base = f"http://127.0.0.1:{api_port}"
            async with httpx.AsyncClient(base_url=base, timeout=30) as http:
                async def health():
                    try:
                        return (await http.get("/api/health")).status_code == 200 or None
                    except httpx.HTTPError:
                        return None

                await until("the API", health, api, worker)
                uploaded = await http.post("/api/files", headers=key,
                                           files={"file": ("contrato.pdf", make_pdf(20_000))})
                assert uploaded.status_code == 201, uploaded.text
                job_id = uploaded.json()["id"]

                async def completed():
                    job = (await http.get(f"/api/jobs/{job_id}", headers=key)).json()
                    return job if job["status"] == "Completed" else None

                await until("the job to complete", completed, api, worker)

            async def chain():
                spans = list(receiver.spans)
                request = one(spans, service="esteira-api", name="POST /api/files",
                              kind=SERVER_KIND)
                if request is None:
                    return None
                started = one(spans, name=f"StartWorkflow:{JOB_WORKFLOW}",
                              parent_id=request.span_id)
                run = started and one(spans, name=f"RunWorkflow:{JOB_WORKFLOW}",
                                      parent_id=started.span_id)
                # Temporal's interceptor hangs a workflow's spans (its run, the activities it
                # schedules) off the span that started it.
                scheduled = run and one(spans, "StartActivity:", parent_id=started.span_id,
                                        service="esteira-worker")
                if scheduled is None:
                    return None
                ran = one(spans, name="RunActivity:" + scheduled.name.split(":", 1)[1],
                          parent_id=scheduled.span_id)
                return ran and (request, started, run, scheduled, ran)

            try:
                request, started, run, scheduled, ran = await until(
                    "API -> workflow -> activity spans", chain, api, worker, timeout=60)
            except AssertionError as exc:
                seen = sorted({(s.service, s.name, s.kind, s.span_id, s.parent_id)
                               for s in receiver.spans})
                raise AssertionError(f"{exc}; spans received: {seen}") from None
        finally:
            stop(api, worker)
    assert len({s.trace_id for s in (request, started, run, scheduled, ran)}) == 1
    assert (started.service, run.service, ran.service) == (
        "esteira-api", "esteira-worker", "esteira-worker")
    assert set(receiver.paths) == {"/v1/traces"}
