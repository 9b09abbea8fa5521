"""The Folders page tells a silent watcher and an unlistable folder apart from a running one."""

from __future__ import annotations

from markupsafe import escape

from activities.signer.models.jobs import InputFolderState
from shared.db.models import utcnow

UNLISTABLE = "/data/input/inbox can't be listed: Permission denied"


def _card(page: str) -> str:
    return page[page.index(">inbox<"):].split("</article>", 1)[0]


async def test_the_folder_card_says_no_signal_then_unavailable_then_running(operator):
    silent = _card((await operator.get("/folders")).text)
    assert "chip red\">no signal" in silent and "chip green" not in silent
    assert str(escape("no watcher has ever reported on this folder")) in silent
    async with operator.context.sessions() as session:
        session.add(InputFolderState(name="inbox", status="Unavailable", last_error=UNLISTABLE,
                                     last_scan_at=utcnow()))
        await session.commit()
    unlistable = _card((await operator.get("/folders")).text)
    assert "chip red\">unavailable" in unlistable and str(escape(UNLISTABLE)) in unlistable
    async with operator.context.sessions() as session:
        row = await session.get(InputFolderState, "inbox")
        row.status, row.last_scan_at = "Running", utcnow()
        session.add(row)
        await session.commit()
    running = _card((await operator.get("/folders")).text)
    assert "chip green\">running" in running
