"""The upload walk through the signer's face: every door shares the process's one enqueuer,
and an upload asks the name rule and the store's "already processed?" once each."""

from __future__ import annotations

import uuid

import pytest

import activities.signer.enqueue as enqueue_module
import activities.signer.operator.intake as intake_module
from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import Job
from activities.signer.names import name_problem
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}


@pytest.fixture(autouse=True)
def _own_task_queues(settings):
    settings.pipeline.task_queue_suffix = f"-walk-{uuid.uuid4().hex[:8]}"


def _count_name_rule(monkeypatch) -> list[str]:
    """Every call of the name rule, from wherever the walk calls it."""
    asked: list[str] = []

    def counted(name: str) -> str | None:
        asked.append(name)
        return name_problem(name)

    for module in (enqueue_module, intake_module):
        monkeypatch.setattr(module, "name_problem", counted)
    return asked


def _count_store_questions(repository) -> list[tuple]:
    """Each "already processed?" question the store is asked, by either of its two doors."""
    asked: list[tuple] = []
    batch, single = repository.paths_and_names, repository.name_owner

    async def batched(questions):
        asked.extend(name for _path, name in questions if name is not None)
        return await batch(questions)

    async def one(name):
        asked.append(name)
        return await single(name)

    repository.paths_and_names, repository.name_owner = batched, one
    return asked


async def test_an_upload_asks_the_name_rule_and_the_store_once_each(api, monkeypatch):
    names = _count_name_rule(monkeypatch)
    questions = _count_store_questions(api.context.faces.signer.repository)
    answer = await api.post("/api/files", headers=AUTH,
                            files={"file": ("lote.pdf", make_pdf(), "application/pdf")})
    assert answer.status_code == 201, answer.text
    assert names == ["lote.pdf"], "the name rule was asked more than once"
    assert questions == ["lote.pdf"], "the store was asked more than once"


async def test_an_already_processed_name_is_refused_after_one_question(api, monkeypatch):
    first = await api.post("/api/files", headers=AUTH, files={"file": ("a.pdf", make_pdf())})
    assert first.status_code == 201
    async with api.context.sessions() as session:
        job = await session.get(Job, first.json()["id"])
        job.status = "Completed"
        session.add(job)
        await session.commit()
    questions = _count_store_questions(api.context.faces.signer.repository)
    again = await api.post("/api/files", headers=AUTH, files={"file": ("A.pdf", make_pdf())})
    assert (again.status_code, again.json()["code"]) == (409, "file.already-processed")
    assert questions == ["A.pdf"]


async def test_every_door_enqueues_through_the_process_s_one_enqueuer(api):
    """Uploads, rescans and retries of the API process all reach the face's enqueuer (its
    batching spans them); no request builds one of its own."""
    enqueuer = api.context.faces.signer.enqueuer
    seen: list[str] = []
    enqueue = enqueuer.enqueue

    async def counted(path, **kwargs):
        seen.append(kwargs["source"].value)
        return await enqueue(path, **kwargs)

    enqueuer.enqueue = counted  # type: ignore[method-assign]
    inbox = api.context.settings.storage_root / "input" / "inbox"
    (inbox / "pasta.pdf").write_bytes(make_pdf())
    upload = await api.post("/api/files", headers=AUTH, files={"file": ("up.pdf", make_pdf())})
    rescan = await api.post("/api/rescan", headers=AUTH)
    assert (upload.status_code, rescan.status_code) == (201, 200)
    assert sorted(seen) == ["rescan", "upload"]
    assert api.context.faces.signer.enqueuer is enqueuer
