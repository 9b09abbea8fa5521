"""Which files become candidates: stability window and ignore lists."""

from __future__ import annotations

from activities.signer.ignore import ignored
from services.watcher.stability import StabilityTracker


def test_a_file_is_ready_only_after_the_window_without_changes(tmp_path):
    path = tmp_path / "growing.rem"
    path.write_bytes(b"x" * 10)
    tracker = StabilityTracker(window_seconds=1.0)
    tracker.offer(path, now=0.0)
    assert tracker.ready(now=0.5) == []
    path.write_bytes(b"x" * 20)  # still being written
    assert tracker.ready(now=0.9) == []
    assert tracker.ready(now=1.5) == [], "the window restarts at the last change"
    assert tracker.ready(now=2.0) == [path]
    assert tracker.pending() == 0


def test_a_file_that_disappears_while_settling_is_forgotten(tmp_path):
    path = tmp_path / "gone.pdf"
    path.write_bytes(b"%PDF")
    tracker = StabilityTracker(window_seconds=0.1)
    tracker.offer(path, now=0.0)
    path.unlink()
    assert tracker.ready(now=1.0) == [] and tracker.pending() == 0


def test_producer_temporary_files_and_configured_patterns_are_ignored():
    assert ignored(".hidden.pdf", [])
    assert ignored("upload.pdf.part", [])
    assert ignored("~$folha.rem", [])
    assert ignored("REPORT.TMP", [])
    assert ignored("lote.bak", ["*.bak"])
    assert not ignored("lote.rem", ["*.bak"])
