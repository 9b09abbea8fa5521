"""The pictures: the System page draws the signer's last hour from the jobs' timestamps."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest

from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from shared.db.models import utcnow

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


async def test_system_page_charts_throughput_and_stage_latency_of_the_last_hour(operator):
    now = utcnow()
    repository = JobRepository(operator.context.sessions)
    for finished_ago, done in ((timedelta(minutes=10), True), (timedelta(hours=3), True),
                               (None, False)):
        end = now - finished_ago if finished_ago else None
        start = (end or now) - timedelta(seconds=6)
        await repository.insert(Job(
            id=str(uuid.uuid4()), file_name="a.pdf", original_path="/in/a.pdf",
            source="upload", profile_name="default", format="Pades",
            status="Completed" if done else "Queued", folder="inbox",
            created_at=start - timedelta(seconds=2), started_at=start if done else None,
            signing_started_at=start + timedelta(seconds=1) if done else None,
            completed_at=end), "test row")
    page = (await operator.get("/system")).text
    titles = dict(re.findall(r'<title id="signer-(\w+)-title">(.*?)</title>', page))
    # Only the job finished inside the hour counts; the one from 3 h ago and the queued don't.
    assert "finished 1 in all, at most 1" in titles["throughput"]
    assert "queued 2 s in all" in titles["latency"]
    assert "preparing 1 s in all" in titles["latency"]
    assert "signing 5 s in all" in titles["latency"]
