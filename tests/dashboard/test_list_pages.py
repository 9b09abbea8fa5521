"""The dashboard's jobs and events lists page with the API's cursor: a "Next page" link that
keeps the filters and shows the rest."""

from __future__ import annotations

import html
import re
import uuid

from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository, new_job_id
from services.dashboard.routes.events import PAGE_SIZE as EVENTS_PAGE
from services.dashboard.routes.jobs import PAGE_SIZE as JOBS_PAGE

NEXT = re.compile(r'<a href="([^"]+)" rel="next">Next page</a>')


async def _jobs(operator, count: int, status: str) -> None:
    jobs = [Job(id=new_job_id(), file_name=f"{status}-{n:04d}.pdf",
                original_path=f"/in/{uuid.uuid4()}.pdf", source="watcher",
                profile_name="default", format="Pades", status=status)
            for n in range(count)]
    await JobRepository(operator.context.sessions).insert_all(
        [(job, "seeded") for job in jobs])


async def test_the_jobs_table_pages_with_the_filters_kept(operator):
    await _jobs(operator, JOBS_PAGE + 2, "Failed")
    await _jobs(operator, 3, "Completed")
    first = (await operator.get("/jobs", params={"status": "Failed"})).text
    assert first.count('data-status="Failed"') == JOBS_PAGE
    [link] = NEXT.findall(first)
    link = html.unescape(link)
    assert "status=Failed" in link and "cursor=" in link
    rest = (await operator.get(link)).text
    assert rest.count('data-status="Failed"') == 2 and 'data-status="Completed"' not in rest
    assert not NEXT.findall(rest), "the last page has no next page"
    rows = (await operator.get(link.replace("/jobs?", "/jobs/rows?"))).text
    assert rows.count('data-status="Failed"') == 2, "the live refresh keeps its page"


async def test_the_events_page_pages_too(operator):
    for n in range(EVENTS_PAGE // 2 + 1):
        await operator.context.faces.signer.pipeline.pause(actor="t", reason=f"r{n}")
        await operator.context.faces.signer.pipeline.resume(actor="t")
    first = (await operator.get("/events")).text
    [link] = NEXT.findall(first)
    rest = (await operator.get(html.unescape(link))).text
    assert "Reason: r0." in rest and "Reason: r0." not in first
    assert not NEXT.findall(rest)
