"""The connection check: each configured institution's token endpoint and CRM, and the
Mensageria's token endpoint, called once; a failure names the setting to change."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.clients import (
    MensageriaClient,
    MidazClient,
    MissingCredentials,
    UpstreamError,
)
from activities.sisbajud.m2m import M2MSession, TokenUnavailable
from shared.findings import record_finding
from shared.settings import InstitutionSettings, Settings

log = logging.getLogger("esteira.sisbajud")
INSTITUTION_SETTING = "ESTEIRA_SISBAJUD__INSTITUTIONS[{id}].{name}"


@dataclass(frozen=True)
class Connection:
    """One endpoint's verdict: `what` was called at `url`, and what to change when it failed."""

    target: str  # `SIMBANK token`, `SIMBANK crm`, `Mensageria token`
    url: str
    ok: bool
    detail: str

    def line(self) -> str:
        """`ok GET url` / `FAILED url: why`, as the banner and the logs show it."""
        return f"{'ok' if self.ok else 'FAILED'} {self.url}" + ("" if self.ok else
                                                               f": {self.detail}")

    def to_json(self) -> dict[str, Any]:
        """The preflight's and readiness's view."""
        return {"target": self.target, "url": self.url, "ok": self.ok, "detail": self.detail}


async def check_connections(http: httpx.AsyncClient, settings: Settings) -> list[Connection]:
    """Every configured endpoint, concurrently; never raises."""
    checks = [_institution(http, settings, i) for i in settings.sisbajud.institutions]
    checks.append(_mensageria(http, settings))
    found: list[Connection] = []
    for part in await asyncio.gather(*checks):
        found += part
    return found


def summary(connections: list[Connection]) -> tuple[bool, str]:
    """(all ok, one line per failure or a count) for a readiness finding."""
    failed = [c for c in connections if not c.ok]
    if not failed:
        return True, f"{len(connections)} endpoint(s) answered"
    return False, "; ".join(f"{c.target}: {c.line()}" for c in failed)


async def _institution(http: httpx.AsyncClient, settings: Settings,
                       institution: InstitutionSettings) -> list[Connection]:
    def setting(name: str) -> str:
        return INSTITUTION_SETTING.format(id=institution.id, name=name)

    try:
        midaz = MidazClient.for_institution(http, settings, institution)
    except MissingCredentials as exc:
        return [Connection(f"{institution.id} token", "-", False,
                           f"{exc}: set {setting('client_id')}/{setting('client_secret')}")]
    token = await _token(f"{institution.id} token", midaz.m2m, setting("token_url"),
                         setting("auth"), f"{setting('client_id')}/{setting('client_secret')}")
    if not token.ok:
        return [token]
    return [token, await _subject(midaz, settings, institution), await _crm(midaz, institution,
                                                                            setting)]


async def _subject(midaz: MidazClient, settings: Settings, institution: InstitutionSettings
                   ) -> Connection:
    """The token speaks for `EXECUTOR_M2M_SUBJECT`, the owner this executor records."""
    target, expected = f"{institution.id} subject", settings.sisbajud.m2m_subject
    url = midaz.m2m.credentials.token_url
    try:
        subject = await midaz.m2m.subject()
    except TokenUnavailable as exc:
        return Connection(target, url, False, str(exc))
    if subject == expected:
        return Connection(target, url, True, f"sub {subject}")
    why = ("the token carries no subject" if not subject
           else f"the token's sub is {subject!r}")
    return Connection(target, url, False, f"{why}, EXECUTOR_M2M_SUBJECT is {expected!r}: change "
                      f"EXECUTOR_M2M_SUBJECT (ESTEIRA_SISBAJUD__M2M_SUBJECT) or the client "
                      f"{INSTITUTION_SETTING.format(id=institution.id, name='client_id')}")


async def _mensageria(http: httpx.AsyncClient, settings: Settings) -> list[Connection]:
    prefix = "ESTEIRA_SISBAJUD__MENSAGERIA_"
    try:
        m2m = MensageriaClient.from_settings(http, settings).m2m
    except MissingCredentials as exc:
        return [Connection("Mensageria token", "-", False,
                           f"{exc}: set {prefix}CLIENT_ID/{prefix}CLIENT_SECRET")]
    return [await _token("Mensageria token", m2m, f"{prefix}TOKEN_URL", f"{prefix}AUTH",
                         f"{prefix}CLIENT_ID/{prefix}CLIENT_SECRET")]


async def _token(target: str, m2m: M2MSession, url_setting: str, mode_setting: str,
                 client_settings: str) -> Connection:
    url = m2m.credentials.token_url
    try:
        await m2m.token()
    except TokenUnavailable as exc:
        cause = exc.__cause__
        status = (cause.response.status_code if isinstance(cause, httpx.HTTPStatusError)
                  else None)
        if status in (404, 405) or "http_404" in str(exc) or "http_405" in str(exc):
            why = (f"{status or 404}: no token endpoint there ({m2m.credentials.auth} mode); "
                   f"change {url_setting} or {mode_setting}")
        elif exc.refused:
            why = f"{exc}; check {client_settings} and {mode_setting}"
        else:
            why = f"{exc}; check {url_setting} (unreachable)"
        return Connection(target, url, False, why)
    return Connection(target, url, True, f"token issued ({m2m.credentials.auth})")


async def _crm(midaz: MidazClient, institution: InstitutionSettings, setting: Any
               ) -> Connection:
    target = f"{institution.id} crm"
    url = midaz.crm_url
    try:
        await midaz.crm_page(document=None, limit=1)
    except UpstreamError as exc:
        if exc.status == 404:
            change = (f"{setting('crm_base_url')} or {setting('crm_mode')}"
                      if institution.crm_mode == "legacy" else
                      f"{setting('crm_embedded_version')} (Midaz 4 serves v1) or "
                      f"{setting('crm_mode')}")
            return Connection(target, url, False, f"404 {exc.code or ''}".rstrip()
                              + f": no CRM route there; change {change}")
        if exc.status is None:
            return Connection(target, url, False, f"unreachable ({exc.detail}); check "
                              + (setting("crm_base_url") if institution.crm_mode == "legacy"
                                 else setting("base_url")))
        return Connection(target, url, False, f"{exc.status} {exc.code or ''}".rstrip()
                          + f": check the grants of {setting('client_id')} on the CRM")
    return Connection(target, url, True, "answered")


# The worker's finding at boot, shown by /api/ready (gating) and `esteira status`.
CONNECTIONS_FINDING = "sisbajud:connections"


async def record_connections(sessions: async_sessionmaker[AsyncSession], settings: Settings,
                             http: httpx.AsyncClient, reporter: str) -> list[Connection]:
    """Check at boot, log each line, keep the verdict for readiness (bounded: a host that
    never answers delays the worker's start by this check's timeout at most)."""
    bound = settings.sisbajud.http_timeout_seconds + 5
    try:
        found = await asyncio.wait_for(check_connections(http, settings), bound)
    except TimeoutError:
        found = [Connection("connections", "-", False, f"no answer within {bound:g}s")]
    for connection in found:
        (log.info if connection.ok else log.error)("SISBAJUD connection %s: %s",
                                                   connection.target, connection.line())
    ok, detail = summary(found)
    try:
        await record_finding(sessions, CONNECTIONS_FINDING, ok=ok, detail=detail,
                             reporter=reporter)
    except Exception as exc:  # the store's own readiness line shows a store problem
        log.warning("Could not record the SISBAJUD connection check: %s", exc)
    return found


# After a failed boot check (a simulator or a Midaz still starting), checked again this often
# until every endpoint answers; then no more calls.
RECHECK_SECONDS = 15.0


async def recheck_until_ok(sessions: async_sessionmaker[AsyncSession], settings: Settings,
                           http: httpx.AsyncClient, reporter: str,
                           every: float = RECHECK_SECONDS) -> None:
    """Record the check again every `every` seconds until it passes."""
    while True:
        await asyncio.sleep(every)
        if summary(await record_connections(sessions, settings, http, reporter))[0]:
            return
