"""The job page lists the job's files as plain download links that the session opens."""

from __future__ import annotations

import re
import uuid

from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree

LINK = re.compile(r'<a href="([^"]+)" download>([^<]+)</a>')


async def _job(client, storage: StorageTree, name: str, status: str, **fields) -> Job:
    job = Job(id=str(uuid.uuid4()), file_name=name,
              original_path=str(storage.root / "input" / "inbox" / name), source="watcher",
              profile_name="default", format="Pades", status=status, folder="inbox", **fields)
    return await JobRepository(client.context.sessions).insert(job, "test row")


async def test_the_job_page_links_each_file_and_the_link_downloads_it(operator):
    storage = StorageTree(operator.context.settings.storage_root)
    storage.ensure()
    output = storage.output / "relatório de março.signed.pdf"
    output.write_bytes(b"%PDF signed")
    job = await _job(operator, storage, "relatório de março.pdf", "Completed",
                     output_path=str(output))
    (storage.error / job.id).mkdir()
    (storage.error / job.id / "trace.txt").write_bytes(b"why")
    page = await operator.get(f"/jobs/{job.id}")
    assert page.status_code == 200
    links = LINK.findall(page.text)
    assert [name for _href, name in links] == ["output/relatório de março.signed.pdf",
                                               "error/trace.txt"]
    href = links[0][0]
    assert href == (f"/api/jobs/{job.id}/files/output/"
                    "relat%C3%B3rio%20de%20mar%C3%A7o.signed.pdf")
    answer = await operator.get(href)  # the cookie alone, as a browser follows a link
    assert answer.status_code == 200 and answer.content == b"%PDF signed"
    assert answer.headers["content-disposition"] == (
        "attachment; filename=\"relat_rio de mar_o.signed.pdf\"; "
        "filename*=UTF-8''relat%C3%B3rio%20de%20mar%C3%A7o.signed.pdf")
    history = (await operator.get(f"/jobs/{job.id}")).text
    assert "output/relatório de março.signed.pdf downloaded by operator:operator." in history


async def test_a_job_without_files_says_so(operator):
    storage = StorageTree(operator.context.settings.storage_root)
    job = await _job(operator, storage, "fila.pdf", "Queued")
    page = await operator.get(f"/jobs/{job.id}")
    assert "No signed output, returned file or error copy for this job." in page.text
    assert not LINK.findall(page.text)
