"""The dashboard over plain HTTP: login, sessions, CSRF, and every page on both stores."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
import pytest
from sqlmodel import select

from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from activities.sisbajud.models import SisbajudHumanDecision
from services.app import create_app
from services.dashboard.session import SESSION_COOKIE, SessionCodec
from services.dashboard.web import FLASH_COOKIE
from shared.db.models import Instance, OperationalEvent, PipelineState, utcnow
from shared.instances import instance_id
from shared.settings import InputFolderSettings
from tests.api.conftest import API_KEY, make_context
from tests.dashboard.conftest import csrf_of, sign_in

# Session and CSRF rules don't depend on the store: one backend is enough for those.
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"])
PAGES = ["/jobs", "/profiles", "/profiles/_new", "/profiles/default", "/folders", "/events",
         "/system", "/pickup", "/sisbajud"]


async def _paused(web) -> bool:
    async with web.context.sessions() as session:
        state = await session.get(PipelineState, 1)
    return bool(state and state.paused)


@sqlite_only
async def test_anonymous_pages_redirect_to_login_and_htmx_gets_a_401(web):
    for path in PAGES:
        answer = await web.get(path)
        assert answer.status_code == 303, path
        assert answer.headers["location"] == f"/login?next={path.replace('/', '%2F')}"
    polled = await web.get("/jobs/rows", headers={"HX-Request": "true"})
    assert polled.status_code == 401 and polled.headers["HX-Redirect"].startswith("/login")
    assert (await web.post("/system/pause", data={})).status_code == 303
    assert not await _paused(web)


@sqlite_only
async def test_a_wrong_password_or_unknown_name_gets_no_session(web):
    for name, password in (("operator", "wrong"), ("nobody", API_KEY)):
        answer = await sign_in(web, name, password)
        assert answer.status_code == 401
        assert "Wrong operator name or password." in answer.text
        assert SESSION_COOKIE not in web.cookies
    assert (await web.get("/jobs")).status_code == 303


@sqlite_only
async def test_login_sets_a_strict_httponly_expiring_cookie_and_goes_where_it_was_headed(web):
    answer = await sign_in(web)
    assert answer.status_code == 303 and answer.headers["location"] == "/jobs"
    cookie = next(h for h in answer.headers.get_list("set-cookie")
                  if h.startswith(SESSION_COOKIE + "="))
    flags = cookie.lower()
    assert "httponly" in flags and "samesite=strict" in flags and "max-age=28800" in flags
    assert (await web.get("/jobs")).status_code == 200


@sqlite_only
async def test_login_without_its_csrf_token_is_refused(web):
    await web.get("/login")
    answer = await web.post("/login", data={"username": "operator", "password": API_KEY})
    assert answer.status_code == 403 and SESSION_COOKIE not in web.cookies


@sqlite_only
async def test_next_never_leaves_the_site(web):
    page = await web.get("/login", params={"next": "//evil.example/x"})
    answer = await web.post("/login", data={"username": "operator", "password": API_KEY,
                                            "csrf_token": csrf_of(page.text),
                                            "next": "//evil.example/x"})
    assert answer.headers["location"] == "/jobs"


async def test_a_form_without_the_session_csrf_token_is_refused_and_changes_nothing(operator):
    missing = await operator.post("/system/pause", data={"reason": "x"})
    wrong = await operator.post("/system/pause", data={"reason": "x", "csrf_token": "forged"})
    assert missing.status_code == wrong.status_code == 403
    assert not await _paused(operator)
    token = csrf_of((await operator.get("/system")).text)
    done = await operator.post("/system/pause", data={"reason": "Manutenção trimestral",
                                                      "csrf_token": token})
    assert done.status_code == 303 and await _paused(operator)
    async with operator.context.sessions() as session:
        event = (await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == "PipelinePaused"))).one()
    assert event.actor == "operator:operator"
    assert event.message == "Pipeline paused by operator. Reason: Manutenção trimestral."
    # htmx sends the token as a header instead of a form field.
    header = await operator.post("/system/resume", headers={"X-CSRF-Token": token})
    assert header.status_code == 303 and not await _paused(operator)


@sqlite_only
async def test_an_expired_or_forged_session_is_sent_back_to_login(web):
    codec = SessionCodec.from_settings(web.context.settings, API_KEY)
    expired, _ = codec.issue("operator", utcnow() - timedelta(minutes=481))
    web.cookies.set(SESSION_COOKIE, expired)
    assert (await web.get("/jobs")).status_code == 303
    fresh, _ = codec.issue("operator", utcnow())
    body, signature = fresh.rsplit(".", 1)
    web.cookies.set(SESSION_COOKIE, f"{body}x.{signature}")
    assert (await web.get("/jobs")).status_code == 303
    web.cookies.set(SESSION_COOKIE, fresh)
    assert (await web.get("/jobs")).status_code == 200


@sqlite_only
async def test_a_non_ascii_session_cookie_is_sent_back_to_login(web):
    fresh, _ = SessionCodec.from_settings(web.context.settings, API_KEY).issue(
        "operator", utcnow())
    body, signature = fresh.rsplit(".", 1)
    for value in (f"{body}.{signature[:-1]}é", f"{body}é.{signature}", "é.é", "ação"):
        raw = f"{SESSION_COOKIE}={value}".encode()
        answer = await web.get("/jobs", headers={"Cookie": raw})
        assert answer.status_code == 303, value
        assert answer.headers["location"] == "/login?next=%2Fjobs"
        polled = await web.get("/jobs/rows", headers={"Cookie": raw, "HX-Request": "true"})
        assert polled.status_code == 401, value


@sqlite_only
async def test_cookies_are_secure_when_configured_the_flash_notice_too(settings, temporal_env):
    settings.pipeline.task_queue_suffix = f"-dash-{uuid.uuid4().hex[:8]}"
    settings.dashboard.secure_cookies = True
    context = await make_context(settings, temporal_env)
    transport = httpx.ASGITransport(app=create_app(context))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="https://esteira") as web:
            signed_in = await sign_in(web)
            assert signed_in.status_code == 303
            assert "secure" in _set_cookie(signed_in, SESSION_COOKIE)
            token = csrf_of((await web.get("/system")).text)
            paused = await web.post("/system/pause", data={"csrf_token": token})
            assert paused.status_code == 303
            flags = _set_cookie(paused, FLASH_COOKIE)
            assert "secure" in flags and "httponly" in flags and "samesite=strict" in flags
            shown = await web.get("/system")
            assert "Pipeline paused." in shown.text
            assert "secure" in _set_cookie(shown, FLASH_COOKIE)  # the deletion matches it
    finally:
        await context.engine.dispose()


def _set_cookie(answer: httpx.Response, name: str) -> str:
    """The lower-cased Set-Cookie header the answer carries for `name`."""
    return next(h for h in answer.headers.get_list("set-cookie")
                if h.startswith(name + "=")).lower()


@sqlite_only
async def test_automation_uses_the_api_key_without_csrf(web):
    headers = {"X-API-Key": API_KEY}
    assert (await web.get("/system", headers=headers)).status_code == 200
    assert (await web.post("/system/pause", headers=headers)).status_code == 303
    assert await _paused(web)
    assert (await web.get("/system", headers={"X-API-Key": "wrong"})).status_code == 303


async def test_every_page_renders_for_an_operator(operator):
    for path in PAGES:
        answer = await operator.get(path)
        assert answer.status_code == 200, (path, answer.text[:500])
        assert 'name="csrf_token"' in answer.text, path
    async with operator.context.sessions() as session:
        for ident in (instance_id("api"), "elsewhere:worker:1"):
            session.add(Instance(instance_id=ident, role=ident.split(":")[1], host="h", pid=1,
                                 version="9.9.9", state="running"))
        await session.commit()
    system = (await operator.get("/system")).text
    assert "Danger zone" in system and "9.9.9" in system
    assert f'class="me" aria-current="true">\n      <td>{instance_id("api")} (answered' in system
    assert system.count("(answered this page)") == 1


async def test_job_page_links_the_family_the_temporal_ui_and_shows_extra_detail(operator):
    repository = JobRepository(operator.context.sessions)
    inbox = operator.context.settings.storage_root / "input" / "inbox"
    parent = await repository.insert(Job(
        id=str(uuid.uuid4()), file_name="a.pdf", original_path=str(inbox / "a.pdf"),
        source="watcher", profile_name="default", format="Pades", status="Failed",
        folder="inbox", error_code="sign.failed", error_message="The token said no."), "seed")
    child = await repository.insert(Job(
        id=str(uuid.uuid4()), file_name="a.pdf", original_path=str(inbox / "a.pdf"),
        source="retry", profile_name="default", format="Pades", status="Queued",
        folder="inbox", parent_job_id=parent.id), "seed")
    page = (await operator.get(f"/jobs/{parent.id}")).text
    assert f'href="/jobs/{child.id}"' in page and "The token said no." in page
    ui = operator.context.settings.ports.temporal_ui
    assert f"http://127.0.0.1:{ui}/namespaces/default/workflows/signer-job%3A{parent.id}" in page
    assert ">Retry</button>" in page and 'data-open="cancel-dialog"' not in page
    queued = (await operator.get(f"/jobs/{child.id}")).text
    assert f'href="/jobs/{parent.id}"' in queued and 'data-open="cancel-dialog"' in queued
    assert "A canceled job has no Retry" in queued and "Keep job" in queued
    assert (await operator.get(f"/jobs/{uuid.uuid4()}")).status_code == 404


async def test_upload_reports_each_file_and_a_refusal_with_its_code(operator):
    token = csrf_of((await operator.get("/jobs")).text)
    files = [("files", ("one.pdf", make_pdf(), "application/pdf")),
             ("files", ("../", b"x", "application/octet-stream"))]
    answer = await operator.post("/jobs/upload", data={"csrf_token": token,
                                                       "profile": "default"}, files=files)
    assert answer.status_code == 200
    assert "one.pdf:" in answer.text and "queued as <a href=\"/jobs/" in answer.text
    assert "input.invalid-name" in answer.text


@sqlite_only
async def test_upload_button_is_hidden_when_uploads_are_disabled(operator):
    operator.context.settings.upload.enabled = False
    assert "Upload files" not in (await operator.get("/jobs")).text


async def test_edit_behaviour_refusal_comes_back_with_its_code(operator):
    token = csrf_of((await operator.get("/profiles/default")).text)
    answer = await operator.post("/profiles/default", data={
        "csrf_token": token, "input_folder": "nowhere", "enabled": "on"})
    assert answer.status_code == 303
    page = (await operator.get("/profiles/default")).text
    assert "profile.folder-not-configured" in page and "Folder nowhere is not configured" in page
    again = (await operator.get("/profiles/default")).text
    assert "profile.folder-not-configured" not in again, "a notice is shown once"


async def test_sisbajud_resolve_goes_through_the_rest_handler_as_the_operator(operator):
    async with operator.context.sessions() as session:
        row = SisbajudHumanDecision(order_id="ORD-1", revision=1, reason="HEARTBEATS_EXHAUSTED")
        session.add(row)
        await session.commit()
        decision_id = row.id
    page = (await operator.get("/sisbajud")).text
    assert f'action="/sisbajud/decisions/{decision_id}/resolve"' in page
    token = csrf_of(page)
    bad = await operator.post(f"/sisbajud/decisions/{decision_id}/resolve",
                              data={"csrf_token": token, "effect": "INDETERMINATE",
                                    "reason": "x"})
    assert bad.status_code == 303
    assert "request.invalid" in (await operator.get("/sisbajud")).text
    # No order workflow waits for it here: the handler's refusal comes back with its code.
    gone = await operator.post(f"/sisbajud/decisions/{decision_id}/resolve",
                               data={"csrf_token": token, "effect": "NONE",
                                     "reason": "checked the ledger by hand"})
    assert gone.status_code == 303
    assert "sisbajud.decision-not-open" in (await operator.get("/sisbajud")).text
    assert (await operator.post(f"/sisbajud/decisions/{decision_id}/resolve",
                                data={"effect": "NONE", "reason": "x"})).status_code == 403


async def test_sisbajud_decision_shows_the_ledger_proof_found_after_it(operator):
    async with operator.context.sessions() as session:
        session.add(SisbajudHumanDecision(
            order_id="ORD-2", revision=1, reason="ledger.write-indeterminate",
            disposition="HELD_MONEY_MOVED", proof_found_at=utcnow(),
            ledger_proof={"transactionId": "tx-proof-1", "amount": "40.00",
                          "overdraftTouched": False, "evidence": ""}))
        await session.commit()
    page = (await operator.get("/sisbajud")).text
    assert 'data-proof-transaction="tx-proof-1"' in page
    assert "transaction tx-proof-1, 40.00" in page


@sqlite_only
async def test_sisbajud_lists_page_on_with_the_apis_cursor(operator):
    async with operator.context.sessions() as session:
        session.add_all([SisbajudHumanDecision(order_id=f"ORD-P{index:03}", revision=1,
                                               reason="institution.unconfigured")
                         for index in range(101)])
        await session.commit()
    first = (await operator.get("/sisbajud")).text
    assert "ORD-P100" in first and "ORD-P000" not in first  # newest first, 100 a page
    (link,) = [part.split('"', 1)[0] for part in first.split('href="')[1:]
               if part.startswith("/sisbajud?decisions_cursor=")]
    second = (await operator.get(link.replace("&amp;", "&"))).text
    assert "ORD-P000" in second and "ORD-P001" not in second
    assert "decisions_cursor=" not in second  # the last page links nowhere


async def test_delete_reports_what_went_and_what_stayed_and_records_the_operator(operator):
    repository = JobRepository(operator.context.sessions)
    inbox = operator.context.settings.storage_root / "input" / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    (inbox / "kept.pdf").write_bytes(b"%PDF never staged")
    job = await repository.insert(Job(
        id=str(uuid.uuid4()), file_name="kept.pdf", original_path=str(inbox / "kept.pdf"),
        source="watcher", profile_name="default", format="Pades", status="Failed",
        folder="inbox"), "seed")
    token = csrf_of((await operator.get(f"/jobs/{job.id}")).text)
    answer = await operator.post(f"/jobs/{job.id}/delete",
                                 data={"csrf_token": token, "reason": "name is needed again"})
    assert answer.status_code == 303 and answer.headers["location"] == "/jobs"
    notice = (await operator.get("/jobs")).text
    assert f"Job {job.id} deleted. Removed: nothing. Kept: " in notice
    assert "(never staged by this job)" in notice and (inbox / "kept.pdf").exists()
    assert await repository.get(job.id) is None
    async with operator.context.sessions() as session:
        event = (await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == "JobDeleted"))).one()
    assert event.actor == "operator:operator" and "Reason: name is needed again." in event.message


async def test_rescan_notice_counts_the_folders_nobody_chose(operator):
    settings = operator.context.settings
    settings.storage.inputs = [InputFolderSettings(name="inbox"),
                               InputFolderSettings(name="remessas")]
    folders = (await operator.get("/folders")).text
    # No watcher runs in this test: the assigned folder reads "no signal", never "running".
    assert "no profile" in folders and "no signal" in folders
    answer = await operator.post("/folders/rescan", data={"csrf_token": csrf_of(folders)})
    assert answer.status_code == 303
    page = (await operator.get("/folders")).text
    assert "Rescan: 0 scanned, 0 enqueued" in page
    assert "… 1 folder(s) without a profile, skipped." in page


async def test_events_filter_by_type_text_and_dates(operator):
    token = csrf_of((await operator.get("/system")).text)
    await operator.post("/system/pause", data={"csrf_token": token, "reason": "inventário"})
    await operator.post("/system/resume", data={"csrf_token": token})
    today = utcnow().date()
    by_type = (await operator.get("/events", params={"type": "PipelineResumed"})).text
    assert "Pipeline resumed by operator." in by_type and "inventário" not in by_type
    by_text = (await operator.get("/events", params={"text": "inventário"})).text
    assert "inventário" in by_text and "Pipeline resumed by operator." not in by_text
    in_range = (await operator.get("/events", params={"from": today.isoformat(),
                                                      "to": today.isoformat()})).text
    assert "inventário" in in_range
    tomorrow = (today + timedelta(days=1)).isoformat()
    later = (await operator.get("/events", params={"from": tomorrow})).text
    assert "No events." in later
