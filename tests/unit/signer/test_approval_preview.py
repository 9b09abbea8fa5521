"""Rendering a held PDF's first page: a broken file, a slow renderer or none at all is a 404."""

from __future__ import annotations

import shutil

import pytest

from activities.signer.approvals.mail import approval_link
from activities.signer.operator import approval_preview
from shared.errors import EsteiraError

NEEDS_POPPLER = pytest.mark.skipif(shutil.which("pdftoppm") is None,
                                   reason="poppler-utils (scripts/install-system-deps.sh)")


def _refusal(info: pytest.ExceptionInfo[EsteiraError]) -> tuple[int, str, str]:
    return info.value.status, info.value.code, info.value.message


@NEEDS_POPPLER
async def test_a_broken_pdf_has_no_preview():
    with pytest.raises(EsteiraError) as info:
        await approval_preview.render_first_page(b"%PDF-1.7\nnot really a pdf")
    assert _refusal(info) == (404, "approval.no-preview",
                              "The first page could not be rendered.")


async def test_a_renderer_that_hangs_is_killed(monkeypatch, tmp_path):
    stuck = tmp_path / "pdftoppm"
    stuck.write_text("#!/bin/sh\nexec sleep 600\n")
    stuck.chmod(0o755)
    monkeypatch.setattr(approval_preview.shutil, "which", lambda _name: str(stuck))
    monkeypatch.setattr(approval_preview, "RENDER_TIMEOUT_SECONDS", 0.2)
    with pytest.raises(EsteiraError) as info:
        await approval_preview.render_first_page(b"%PDF-1.7\n")
    assert _refusal(info) == (404, "approval.no-preview",
                              "The preview took too long to render.")


async def test_no_renderer_installed_is_said_plainly(monkeypatch):
    monkeypatch.setattr(approval_preview.shutil, "which", lambda _name: None)
    with pytest.raises(EsteiraError) as info:
        await approval_preview.render_first_page(b"%PDF-1.7\n")
    assert _refusal(info) == (404, "approval.no-preview",
                              "No previewer is installed on this server (poppler-utils).")


def test_the_link_keeps_the_token_in_the_fragment():
    assert approval_link("https://esteira.example.com/", "job/1", "t0k-_en") == \
        "https://esteira.example.com/approve/job%2F1#t0k-_en"
