"""A Python client generated from `/api/openapi.json` (openapi-python-client, offline) drives the
real app over loopback: an upload, a job read, a pickup card moved, and typed refusals."""

from __future__ import annotations

import asyncio
import importlib
import io
import sys
from pathlib import Path

import httpx

from activities.signer.crypto.samples import make_pdf
from services.app import create_app
from tests.api.conftest import API_KEY, make_context
from tests.support.pickup import serve

PACKAGE = "esteira_client"
GENERATOR = Path(sys.executable).with_name("openapi-python-client")
# No formatter hooks: the generator's defaults call ruff on the output, which is not needed.
CONFIG = f"project_name_override: {PACKAGE}\npackage_name_override: {PACKAGE}\npost_hooks: []\n"


async def _generate(base_url: str, into: Path) -> None:
    """Write the client package `PACKAGE` under `into` from the served document."""
    async with httpx.AsyncClient(base_url=base_url) as http:
        document = (await http.get("/api/openapi.json")).raise_for_status().text
    (into / "openapi.json").write_text(document)
    (into / "config.yaml").write_text(CONFIG)
    process = await asyncio.create_subprocess_exec(
        str(GENERATOR), "generate", "--path", str(into / "openapi.json"),
        "--config", str(into / "config.yaml"), "--meta", "none",
        "--output-path", str(into / PACKAGE), cwd=into,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode(errors="replace")


def _import(into: Path):
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]
    sys.path.insert(0, str(into))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(into))


async def test_a_generated_client_uploads_reads_and_moves_a_card(settings, temporal_env,
                                                                 tmp_path):
    settings.pipeline.task_queue_suffix = "-generated-client"
    context = await make_context(settings, temporal_env)
    try:
        async with serve(create_app(context)) as base_url:
            await _generate(base_url, tmp_path)
            _import(tmp_path)
            await _drive(base_url)
    finally:
        await context.engine.dispose()


async def _drive(base_url: str) -> None:
    from esteira_client import AuthenticatedClient
    from esteira_client.api.pickup import (
        arrival_api_pickup_students_student_id_arrival_post as arrival,
    )
    from esteira_client.api.pickup import create_school_api_pickup_schools_post as new_school
    from esteira_client.api.pickup import create_student_api_pickup_students_post as new_student
    from esteira_client.api.pickup import ready_api_pickup_students_student_id_ready_post as ready
    from esteira_client.api.signer import get_job_api_jobs_job_id_get as get_job
    from esteira_client.api.signer import upload_file_api_files_post as upload
    from esteira_client.models import (
        BodyUploadFileApiFilesPost,
        JobDetail,
        JobStatus,
        JobSummary,
        NewSchool,
        NewStudent,
        PickupState,
        Problem,
        Student,
        Versioned,
    )
    from esteira_client.types import File

    anonymous = AuthenticatedClient(base_url=base_url, token="", prefix="",
                                    auth_header_name="X-API-Key")
    client = AuthenticatedClient(base_url=base_url, token=API_KEY, prefix="",
                                 auth_header_name="X-API-Key")
    pdf = File(payload=io.BytesIO(make_pdf()), file_name="generated.pdf",
               mime_type="application/pdf")
    refused = await upload.asyncio_detailed(client=anonymous,
                                            body=BodyUploadFileApiFilesPost(file=pdf))
    assert refused.status_code == 401 and isinstance(refused.parsed, Problem)
    assert refused.parsed.code == "auth.invalid-key"

    pdf.payload.seek(0)
    job = await upload.asyncio(client=client, body=BodyUploadFileApiFilesPost(file=pdf))
    assert isinstance(job, JobSummary), job
    assert (job.file_name, job.status, job.source) == ("generated.pdf", JobStatus.QUEUED,
                                                       "upload")
    detail = await get_job.asyncio(job.id, client=client)
    assert isinstance(detail, JobDetail), detail
    assert (detail.id, detail.status, detail.children) == (job.id, JobStatus.QUEUED, [])
    assert detail.timings.queued_at == job.created_at
    missing = await get_job.asyncio("no-such-job", client=client)
    assert isinstance(missing, Problem) and (missing.status, missing.code) == (
        404, "job.not-found")

    school = await new_school.asyncio(client=client, body=NewSchool(name="Escola"))
    student = await new_student.asyncio(client=client,
                                        body=NewStudent(school_id=school.id, name="Ana"))
    awaiting = await arrival.asyncio(student.id, client=client)
    assert isinstance(awaiting, Student), awaiting
    assert (awaiting.state, awaiting.version) == (PickupState.AWAITING, 1)
    moved = await ready.asyncio(student.id, client=client, body=Versioned(version=1))
    assert isinstance(moved, Student) and (moved.state, moved.version) == (PickupState.READY, 2)
    stale = await ready.asyncio(student.id, client=client, body=Versioned(version=1))
    assert isinstance(stale, Problem), stale
    assert (stale.status, stale.code) == (409, "pickup.invalid-transition")
