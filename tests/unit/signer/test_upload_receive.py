"""Receiving an upload's bytes: a call ended while the file opens leaves no empty file."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from activities.signer.operator.upload import receive_limited


async def test_a_receive_cancelled_while_its_file_opens_leaves_no_file(tmp_path, monkeypatch):
    entered, go, opened = threading.Event(), threading.Event(), threading.Event()
    real_open = Path.open

    def slow_open(self, *args, **kwargs):
        entered.set()
        go.wait()  # held until the receiving task was cancelled
        try:
            return real_open(self, *args, **kwargs)
        finally:
            opened.set()

    monkeypatch.setattr(Path, "open", slow_open)

    async def never():
        await asyncio.Event().wait()
        yield b""

    target = tmp_path / ".incoming" / "upload"
    target.parent.mkdir()
    task = asyncio.create_task(receive_limited(never(), target, 10))
    await asyncio.to_thread(entered.wait)
    task.cancel()
    await asyncio.sleep(0)  # the cancellation reaches the task before the open returns
    go.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.to_thread(opened.wait)  # the thread's open is done, whoever waited for it
    assert list(target.parent.iterdir()) == []


async def test_a_receive_past_the_limit_keeps_nothing(tmp_path):
    async def chunks():
        for _ in range(5):
            yield b"x" * 4

    target = tmp_path / "upload"
    assert await receive_limited(chunks(), target, 10) is False
    assert not target.exists()
