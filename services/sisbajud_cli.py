"""`esteira webhook`, `esteira simulator midaz|mensageria`, `esteira hub send`."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Callable

from shared.logs import configure_logging
from shared.settings import Settings
from shared.tracing import configure_tracing

# The demo order `esteira simulator mensageria` seeds (services/dev/sisbajud_sims.py).
DEMO_ORDER_ID = "0190a000-0000-7000-8000-00000000d001"
EXIT_CONFIG = 2
log = logging.getLogger("esteira")


def _webhook(settings: Settings, args: argparse.Namespace) -> int:
    from services.webhook_gateway.main import run_webhook
    from services.webhook_gateway.secrets import MissingWebhookSecretError

    configure_logging(settings, process="webhook")
    configure_tracing(settings, process="webhook")
    try:
        asyncio.run(run_webhook(settings))
    except MissingWebhookSecretError as exc:
        log.critical("%s", exc)
        return EXIT_CONFIG
    return 0


def _simulator(settings: Settings, args: argparse.Namespace) -> int:
    from services.dev.sisbajud_sims import serve_mensageria, serve_midaz

    configure_logging(settings, process=f"{args.name}-sim")
    if args.name == "turnstile":
        from services.simulators.turnstile.app import main as serve_turnstile

        serve_turnstile(settings.host, settings.ports.turnstile)
        return 0
    if args.name == "lacuna":
        from services.dev.lacuna_sim import serve_lacuna

        serve_lacuna(settings)
        return 0
    if args.name == "midaz":
        asyncio.run(serve_midaz(settings, demo=not args.no_demo,
                                every_institution=args.every_institution))
    else:
        asyncio.run(serve_mensageria(settings, demo=not args.no_demo))
    return 0


def _hub(settings: Settings, args: argparse.Namespace) -> int:
    from services.simulators.hub.sender import send_notice
    from services.webhook_gateway.app import WEBHOOK_PATH
    from services.webhook_gateway.secrets import MissingWebhookSecretError, resolve_secrets

    configure_logging(settings, process="hub", to_file=False)
    try:
        secrets = args.secret or resolve_secrets(settings)
    except MissingWebhookSecretError as exc:
        log.critical("%s", exc)
        return EXIT_CONFIG
    url = args.url or f"http://{settings.host}:{settings.ports.webhook}{WEBHOOK_PATH}"
    if args.until_delivered:
        return asyncio.run(_until_delivered(url, secrets, args))
    response = send_notice(url, secrets, args.order_id, args.revision, msg_id=args.msg_id,
                           skew_s=args.skew_s)
    print(response.status_code, response.text)
    return 0 if response.is_success else 1


async def _until_delivered(url: str, secrets: list[str], args: argparse.Namespace) -> int:
    import httpx

    from services.simulators.hub.redelivery import RETRY_SCHEDULE, Attempt, deliver

    def report(number: int, attempt: Attempt) -> None:
        print(f"attempt {number}/{len(RETRY_SCHEDULE)}:", attempt.status or "no answer",
              attempt.detail, flush=True)

    async with httpx.AsyncClient(timeout=args.timeout_s) as client:
        delivery = await deliver(url, secrets, args.order_id, args.revision, client=client,
                                 msg_id=args.msg_id, skew_s=args.skew_s,
                                 scale=args.retry_scale, on_attempt=report)
    print("delivered" if delivery.delivered else "given up", delivery.msg_id)
    return 0 if delivery.delivered else 1


def add_arguments(name: str, sub: argparse.ArgumentParser) -> None:
    """Arguments of this module's commands."""
    if name == "simulator":
        sub.add_argument("name", choices=["midaz", "mensageria", "turnstile", "lacuna"])
        sub.add_argument("--no-demo", action="store_true",
                         help="start empty (no demo ledger data, no demo order)")
        sub.add_argument("--every-institution", action="store_true",
                         help="midaz: hold the ledger of every configured institution, not "
                              "only those without a base_url (when they name this simulator)")
    elif name == "hub":
        sub.add_argument("action", choices=["send"])
        sub.add_argument("--order-id", default=DEMO_ORDER_ID)
        sub.add_argument("--revision", type=int, default=1)
        sub.add_argument("--url", help="gateway URL (default: this host's webhook port)")
        sub.add_argument("--secret", action="append",
                         help="whsec_… (repeatable; default: the configured or generated one)")
        sub.add_argument("--msg-id", help="webhook-id (stable across retries)")
        sub.add_argument("--skew-s", type=int, default=0, help="shift webhook-timestamp")
        sub.add_argument("--until-delivered", action="store_true",
                         help="retry 5xx/429/timeouts on the Standard Webhooks schedule "
                              "(now, 5s, 5m, 30m, 2h, 5h, 10h, 10h) with the same webhook-id")
        sub.add_argument("--retry-scale", type=float, default=1.0,
                         help="multiply the retry delays (e.g. 0.01 turns 5m into 3s)")
        sub.add_argument("--timeout-s", type=float, default=15.0,
                         help="per-attempt timeout; no answer in time is retried")


COMMANDS: dict[str, tuple[str, Callable[[Settings, argparse.Namespace], int]]] = {
    "webhook": ("run the SISBAJUD webhook gateway (Streaming Hub notices)", _webhook),
    "simulator": ("run the Midaz or Mensageria simulator", _simulator),
    "hub": ("act as the Streaming Hub: sign and send an execution notice", _hub),
}


def banner_rows(settings: Settings) -> list[tuple[str, str]]:
    """The SISBAJUD lines of the `esteira dev` banner."""
    from services.webhook_gateway.app import WEBHOOK_PATH

    sis = settings.sisbajud
    return [("sisbajud webhook", f"http://{settings.host}:{settings.ports.webhook}{WEBHOOK_PATH}"),
            ("sisbajud tick", f"every {sis.tick_every_seconds:g}s, heartbeats every "
                              f"{sis.heartbeat_every_seconds:g}s, a person after "
                              f"{sis.human_decision_after_beats} beats"),
            ("sisbajud accounting routes",
             "on (GET /v1/admin/ledger-routing/preflight)" if sis.systemplane_enabled
             else "off (SYSTEMPLANE_ENABLED)"),
            ("sisbajud institutions", ", ".join(i.id for i in sis.institutions) or "none")]

