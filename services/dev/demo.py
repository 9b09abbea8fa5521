"""The first run that shows each system working (`esteira dev`, Development only, on unless
`ESTEIRA_DEMO__ENABLED=false`; never in any other environment): a PDF dropped into the inbox
and signed, one court order executed from notice to final result and one that waits for a
person, a pickup school whose board moves. Idempotent: a restart adds nothing twice."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx

from activities.signer.operator import JobFilter
from services.composition import Faces
from services.dev import demo_pickup
from services.dev.sisbajud_sims import DEMO_ORDER_ID, DEMO_PERSON_ORDER_ID
from shared.settings import Settings

log = logging.getLogger("esteira.demo")
DEVELOPMENT = "Development"
DEMO_FILE = "esteira-demo.pdf"
# Stable webhook-ids: the gateway records a delivery once per id, across restarts.
DEMO_NOTICES = ((DEMO_ORDER_ID, "demo-notice-executed-r1"),
                (DEMO_PERSON_ORDER_ID, "demo-notice-person-r1"))
# (order id, revision, webhook-id) -> the gateway's HTTP status.
NoticeSender = Callable[[str, int, str], Awaitable[int]]


@dataclass
class DemoReport:
    """What this run of the demo did (empty lists: it was all there already)."""

    dropped: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    pickup: list[str] = field(default_factory=list)


def demo_on(settings: Settings) -> bool:
    """Only Development seeds, and only while `Demo:Enabled` (the default) holds."""
    return settings.environment == DEVELOPMENT and settings.demo.enabled


async def seed_demo(settings: Settings, faces: Faces, *,
                    send: NoticeSender | None = None) -> DemoReport | None:
    """Each system's demo once; None (and nothing touched) outside Development or when off."""
    if not demo_on(settings):
        return None
    report = DemoReport()
    report.dropped = await _signed_document(settings, faces)
    report.notices = await _court_orders(send or _gateway_sender(settings))
    school = await demo_pickup.seed_school(faces.pickup, settings)
    report.pickup = await demo_pickup.move_cards(faces.pickup, school.school_id)
    log.info("Demo: %s", report)
    return report


async def _signed_document(settings: Settings, faces: Faces) -> list[str]:
    """A generated PDF in the first input folder, unless a job or the file is there."""
    folder = settings.input_folder_path(settings.effective_inputs[0])
    target = folder / DEMO_FILE
    known = await faces.signer.jobs.page(JobFilter(text=DEMO_FILE), limit=1)
    if known.items or target.exists():
        return []
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{DEMO_FILE}.part"
    partial.write_bytes(demo_pdf())
    partial.rename(target)  # whole or not at all: the watcher never sees half a file
    return [str(target)]


async def _court_orders(send: NoticeSender) -> list[str]:
    """The Streaming Hub's notice of each demo order; a redelivery answers `duplicate`."""
    sent = []
    for order_id, webhook_id in DEMO_NOTICES:
        try:
            status = await send(order_id, 1, webhook_id)
        except httpx.HTTPError as exc:
            log.warning("Demo: the notice of order %s did not reach the gateway: %s",
                        order_id, exc)
            continue
        sent.append(f"{order_id} {status}")
    return sent


def _gateway_sender(settings: Settings) -> NoticeSender:
    """Signed notices to this host's webhook gateway, as the Hub sends them."""
    from services.simulators.hub.sender import asend_notice
    from services.webhook_gateway.app import WEBHOOK_PATH
    from services.webhook_gateway.secrets import resolve_secrets

    url = f"http://{settings.host}:{settings.ports.webhook}{WEBHOOK_PATH}"

    async def send(order_id: str, revision: int, webhook_id: str) -> int:
        answer = await asend_notice(url, resolve_secrets(settings), order_id, revision,
                                    msg_id=webhook_id)
        return answer.status_code

    return send


async def run_demo(settings: Settings, faces: Faces) -> None:
    """`esteira dev`'s background task: seed, then walk the READY card out the turnstile."""
    try:
        report = await seed_demo(settings, faces)
        if report is not None and any(move.endswith(demo_pickup.READY)
                                      and move.startswith(demo_pickup.STUDENTS[2][1])
                                      for move in report.pickup):
            await demo_pickup.exit_through_turnstile(settings)
    except asyncio.CancelledError:
        raise
    except Exception:  # the demo must never take `esteira dev` down
        log.exception("Demo: seeding failed; the systems run without it")


def demo_rows(settings: Settings) -> list[tuple[str, str]]:
    """The banner's pages to open for each system (with what the demo put there)."""
    base = f"http://{settings.host}:{settings.ports.api}"
    note = "" if demo_on(settings) else " (demo off: ESTEIRA_DEMO__ENABLED=false)"
    return [
        ("open: signer", f"{base}/jobs ({DEMO_FILE} signed), {base}/system{note}"),
        ("open: sisbajud", f"{base}/sisbajud (one order executed, one waiting for a "
                           f"person), {base}/sisbajud/orders/{DEMO_ORDER_ID}"),
        ("open: pickup", f"{base}/pickup ({demo_pickup.SCHOOL}: an arrival, a READY, a "
                         "turnstile exit)"),
    ]


def demo_pdf() -> bytes:
    """A one-page PDF saying what it is, with a correct cross-reference table."""
    text = b"BT /F1 14 Tf 60 780 Td (Esteira demo: signed on the first run) Tj ET"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
               b"/Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
               b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream"]
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)
