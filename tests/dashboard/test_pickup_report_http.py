"""The dismissal report in the dashboard: linked from the board, its figures, its CSV."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.api.pickup.test_dismissal_report_api import DAY, build_day
from tests.dashboard.conftest import sign_in
from tests.support.pickup import Seed

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


async def test_the_board_links_to_a_report_page_with_the_days_figures(operator):
    school, ids = await build_day(SimpleNamespace(seed=Seed(operator.context.sessions)))
    board = await operator.get(f"/pickup/{school.id}")
    assert f'href="/pickup/{school.id}/report"' in board.text
    page = await operator.get(f"/pickup/{school.id}/report", params={"day": DAY})
    assert page.status_code == 200
    assert "7 (turnstile 2, operator 5)" in page.text
    assert "2 min 00 s" in page.text and "10 min 00 s (5 timed)" in page.text
    assert f'data-student-id="{ids["s3"]}"' in page.text
    assert f"/pickup/{school.id}/report.csv?day={DAY}&amp;part=summary" in page.text
    summary = await operator.get(f"/pickup/{school.id}/report.csv",
                                 params={"day": DAY, "part": "summary"})
    assert summary.headers["content-type"].startswith("text/csv")
    assert "students_picked_up,7" in summary.text
    today = await operator.get(f"/pickup/{school.id}/report")
    assert today.status_code == 200 and "Nothing happened that day." in today.text


async def test_a_bad_day_is_said_and_anonymous_readers_sign_in_first(web):
    school, _ = await build_day(SimpleNamespace(seed=Seed(web.context.sessions)))
    anonymous = await web.get(f"/pickup/{school.id}/report.csv", params={"day": DAY})
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/login")
    assert (await sign_in(web)).status_code == 303
    bad = await web.get(f"/pickup/{school.id}/report", params={"day": "10/03/2026"})
    assert bad.status_code == 422 and "request.invalid" in bad.text
    assert (await web.get("/pickup/9999/report")).status_code == 404
