"""A stood-down instance's watcher enqueues nothing new; resumed, it picks the file up."""

from __future__ import annotations

import asyncio
import time

from sqlmodel import select

from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import Job
from services.watcher.folder import FolderWatcher
from services.watcher.stand_down import StandDownFollower
from shared.db.models import Instance
from shared.settings import InputFolderSettings

STABILITY = 0.3


async def _jobs(signer) -> list[Job]:
    async with signer.sessions() as session:
        return list((await session.exec(select(Job))).all())


async def _until(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not (found := await predicate()):
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.05)
    return found


async def test_a_stood_down_watcher_holds_files_until_resumed(signer):
    signer.settings.cluster.enabled = True
    async with signer.sessions() as session:
        session.add(Instance(instance_id="node-a:watcher:1", role="watcher", host="node-a",
                             pid=1, version="1", state="running", instance_name="node-a"))
        await session.commit()
    await signer.face.instances.stand_down("node-a", actor="operator:test")
    follower = StandDownFollower(signer.sessions, "node-a", poll_seconds=0.1)
    await follower.read()  # as the watcher's main does before it starts watching
    consulted: list[float] = []

    def held() -> bool:
        consulted.append(time.monotonic())
        return follower.held()

    watcher = FolderWatcher(InputFolderSettings(name="inbox"), signer.inbox,
                            signer=signer.face, stability_seconds=STABILITY,
                            poll_seconds=0.2, max_failures=10, held=held)
    stop = asyncio.Event()
    tasks = [asyncio.create_task(watcher.run(stop)), asyncio.create_task(follower.run(stop))]
    try:
        dropped = time.monotonic()
        signer.drop("waiting.pdf", make_pdf())

        async def settled_and_held() -> bool:
            return any(at > dropped + STABILITY * 3 for at in consulted)

        await _until(settled_and_held)
        assert await _jobs(signer) == [], "a stood-down instance enqueued a file"
        await signer.face.instances.resume("node-a", actor="operator:test")
        [job] = await _until(lambda: _jobs(signer))
        assert job.file_name == "waiting.pdf"
        assert (await signer.wait_for(job.id)).status == "Completed"
    finally:
        stop.set()
        await asyncio.gather(*tasks)
