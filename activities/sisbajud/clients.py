"""HTTP clients of the systems the executor talks to: Midaz (ledger + CRM) and Mensageria."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.orders import WRITE_TTL_SECONDS
from activities.sisbajud.m2m import (
    TOKEN_PATHS,
    ClientCredentials,
    M2MSession,
    TokenUnavailable,
    session_for,
)
from shared.settings import (
    DEV_M2M_CLIENT_ID,
    DEV_M2M_CLIENT_SECRET,
    InstitutionSettings,
    Settings,
)

CRM_PAGE = 100
LEDGER_PAGE = 100


class UpstreamError(Exception):
    """A non-2xx answer (or none at all) from Midaz or the Mensageria."""

    def __init__(self, status: int | None, code: str | None = None, detail: str = "") -> None:
        super().__init__(f"{status} {code or ''} {detail}".strip())
        self.status, self.code, self.detail = status, code, detail

    @property
    def retryable(self) -> bool:
        """Transport failures, 401 (token refresh), 408, 425, 429 and 5xx may clear up."""
        return self.status is None or self.status in (401, 408, 425, 429) or self.status >= 500


class ReadRefused(UpstreamError):
    """Midaz answered a read with a final refusal (403, a 404 that is not "no such thing",
    another 4xx no retry clears): the operation is not granted, or the route is wrong."""


def error_code(response: httpx.Response) -> str | None:
    """`code` of a Midaz error body (v3 flat or v4 problem+json) or a Mensageria refusal."""
    try:
        body = response.json()
    except ValueError:
        return None
    return str(body["code"]) if isinstance(body, dict) and body.get("code") else None


class MissingCredentials(ValueError):
    """Outside Development every Mensageria and Midaz call needs configured client credentials."""


def credentials(settings: Settings, name: str, base_url: str, token_url: str | None,
                client_id: str | None, client_secret: Any, auth: Any = "lerian"
                ) -> ClientCredentials:
    """The client for one service; Development falls back to the simulators' dev client and
    their token endpoint (`base_url` + the mode's path)."""
    if settings.environment == "Development":
        client_id = client_id or DEV_M2M_CLIENT_ID
        client_secret = client_secret or SecretStr(DEV_M2M_CLIENT_SECRET)
    if not client_id or client_secret is None:
        raise MissingCredentials(f"{name}: no OAuth client id/secret configured")
    return ClientCredentials(name, token_url or f"{base_url}{TOKEN_PATHS[auth]}", client_id,
                             client_secret, auth)


def midaz_credentials(settings: Settings, institution: InstitutionSettings) -> ClientCredentials:
    """The OAuth client of `institution`'s Midaz."""
    inst = institution
    return credentials(settings, f"Midaz {inst.id}", _midaz_base(settings, inst), inst.token_url,
                       inst.client_id, inst.client_secret, inst.auth)


def mensageria_credentials(settings: Settings) -> ClientCredentials:
    """The OAuth client of the Mensageria."""
    sis = settings.sisbajud
    return credentials(settings, "Mensageria", _mensageria_base(settings),
                       sis.mensageria_token_url, sis.mensageria_client_id,
                       sis.mensageria_client_secret, sis.mensageria_auth)


def _midaz_base(settings: Settings, institution: InstitutionSettings) -> str:
    base = institution.base_url or f"http://{settings.host}:{settings.ports.midaz}"
    return base.rstrip("/")


def _mensageria_base(settings: Settings) -> str:
    base = (settings.sisbajud.mensageria_url
            or f"http://{settings.host}:{settings.ports.mensageria}")
    return base.rstrip("/")


@dataclass
class MidazClient:
    """One institution's ledger (`baseUrl`, OAuth client) and its CRM."""

    m2m: M2MSession
    institution: InstitutionSettings
    base_url: str

    @classmethod
    def for_institution(cls, http: httpx.AsyncClient, settings: Settings,
                        institution: InstitutionSettings) -> MidazClient:
        """The client of `institution`; no base URL means the `esteira dev` simulator."""
        m2m = session_for(http, midaz_credentials(settings, institution),
                          settings.sisbajud.m2m_token_leeway_seconds)
        return cls(m2m, institution, _midaz_base(settings, institution))

    async def subject(self) -> str | None:
        """The subject of the token this institution's Midaz issued us."""
        try:
            return await self.m2m.subject()
        except TokenUnavailable as exc:
            raise _upstream(exc) from exc

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """One call with this institution's token (token failures are `UpstreamError`s)."""
        try:
            return await self.m2m.request(method, url, **kwargs)
        except TokenUnavailable as exc:
            raise _upstream(exc) from exc

    @property
    def ledger_path(self) -> str:
        """`{baseUrl}/v1/organizations/{org}/ledgers/{ledger}`."""
        inst = self.institution
        return (f"{self.base_url}/v1/organizations/{inst.organization_id}"
                f"/ledgers/{inst.ledger_id}")

    async def _get(self, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self._send("GET", url, **kwargs)
        except httpx.HTTPError as exc:
            raise UpstreamError(None, detail=f"{type(exc).__name__}: {exc}") from exc

    async def _json(self, url: str, *, missing: tuple[int, ...] = (), **kwargs: Any) -> Any:
        response = await self._get(url, **kwargs)
        if response.status_code in missing:
            return None
        if not response.is_success:
            failed = UpstreamError(response.status_code, error_code(response),
                                   f"GET {response.request.url.path}: {response.text[:200]}")
            if failed.retryable:
                raise failed
            raise ReadRefused(failed.status, failed.code, failed.detail)
        return response.json()

    async def account(self, account_id: str) -> dict[str, Any] | None:
        """`GET …/accounts/{id}`, None when Midaz has no such account."""
        return await self._json(f"{self.ledger_path}/accounts/{account_id}", missing=(404,))

    async def account_by_alias(self, alias: str) -> dict[str, Any] | None:
        """The account whose alias is exactly `alias`: the seed's `accounts?alias=` (a prefix
        match, so filtered here) or the exact route, as the institution is configured."""
        if self.institution.alias_lookup == "exact":
            return await self._json(f"{self.ledger_path}/accounts/alias/{alias}",
                                    missing=(404,))
        page = await self._json(f"{self.ledger_path}/accounts",
                                params={"alias": alias, "limit": LEDGER_PAGE})
        return next((a for a in page.get("items") or [] if a.get("alias") == alias), None)

    async def default_balance(self, alias: str) -> dict[str, Any] | None:
        """The `default` balance of `alias`; None for an unknown alias (Midaz answers `[]`)."""
        body = await self._json(f"{self.ledger_path}/accounts/alias/{alias}/balances")
        return next((b for b in body.get("items", []) if b.get("key") == "default"), None)

    async def create_account(self, body: dict[str, Any]) -> httpx.Response:
        """`POST …/accounts` (no idempotency on this route: callers serialise and look up)."""
        try:
            return await self._send("POST", f"{self.ledger_path}/accounts", json=body)
        except httpx.HTTPError as exc:
            raise UpstreamError(None, detail=f"{type(exc).__name__}: {exc}") from exc

    async def post_transaction(self, kind: str, body: dict[str, Any], key: str
                               ) -> httpx.Response:
        """`POST …/transactions/{kind}` with `X-Idempotency` and `X-TTL` (raises httpx errors
        once the write may have left; `UpstreamError` when no token let it leave)."""
        headers = {"X-Idempotency": key, "X-TTL": str(WRITE_TTL_SECONDS)}
        return await self._send("POST", f"{self.ledger_path}/transactions/{kind}", json=body,
                                headers=headers)

    async def transaction(self, transaction_id: str) -> dict[str, Any] | None:
        """`GET …/transactions/{id}`, None while Midaz does not show it."""
        return await self._json(f"{self.ledger_path}/transactions/{transaction_id}",
                                missing=(404,))

    async def _cursor_pages(self, url: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = ""
        while True:
            page = await self._json(url, params={**params, "limit": LEDGER_PAGE,
                                                 **({"cursor": cursor} if cursor else {})})
            items += page.get("items") or []
            cursor = page.get("next_cursor") or ""
            if not cursor:
                return items

    async def transactions_by_code(self, code: str, start: str, end: str
                                   ) -> list[dict[str, Any]]:
        """`GET …/transactions?metadata.code=` between explicit dates (the default window is
        one month, and a write may be older)."""
        return await self._cursor_pages(f"{self.ledger_path}/transactions", {
            "metadata.code": code, "start_date": start, "end_date": end})

    async def transactions_between(self, start: str, end: str) -> list[dict[str, Any]]:
        """`GET …/transactions` created between explicit dates, every page (the ledger's
        feed: each item names its `source` and `destination` aliases)."""
        return await self._cursor_pages(f"{self.ledger_path}/transactions",
                                        {"start_date": start, "end_date": end})

    async def accounting_route(self, kind: str, route_id: str) -> httpx.Response:
        """`GET …/transaction-routes/{id}` (kind `transaction`) or `…/operation-routes/{id}`."""
        return await self._get(f"{self.ledger_path}/{kind}-routes/{route_id}")

    async def operations(self, account_id: str, start: str, end: str) -> list[dict[str, Any]]:
        """`GET …/accounts/{id}/operations` between explicit dates, every page."""
        return await self._cursor_pages(f"{self.ledger_path}/accounts/{account_id}/operations",
                                        {"start_date": start, "end_date": end})

    @property
    def crm_url(self) -> str:
        """Legacy `{crmBaseUrl}/v1/aliases`, embedded `{baseUrl}/v1/organizations/{org}/
        instruments` (Midaz 4's `listInstruments`)."""
        inst = self.institution
        if inst.crm_mode == "legacy":
            return f"{(inst.crm_base_url or self.base_url).rstrip('/')}/v1/aliases"
        return (f"{self.base_url}/{inst.crm_embedded_version}/organizations/"
                f"{inst.organization_id}/instruments")

    async def crm_page(self, document: str | None, limit: int = CRM_PAGE, page: int = 1
                       ) -> dict[str, Any]:
        """One page of the CRM's records (of `document`, or any: the connection check)."""
        inst = self.institution
        headers = {"X-Organization-Id": inst.organization_id} if inst.crm_mode == "legacy" else {}
        params: dict[str, Any] = {"limit": limit, "page": page}
        if document is not None:
            params["document"] = document
        return await self._json(self.crm_url, headers=headers, params=params)

    async def instruments(self, document: str) -> list[dict[str, Any]]:
        """The subject's CRM records: legacy `GET /v1/aliases`, embedded `…/instruments`."""
        items: list[dict[str, Any]] = []
        page = 1
        while True:
            batch = (await self.crm_page(document, CRM_PAGE, page)).get("items", [])
            items += batch
            if len(batch) < CRM_PAGE:
                return items
            page += 1

    async def balances(self, aliases: list[str]) -> list[dict[str, Any] | None]:
        """Default balances of several aliases, read concurrently."""
        return list(await asyncio.gather(*(self.default_balance(a) for a in aliases)))


class MensageriaTokenError(httpx.TransportError):
    """No Mensageria token: like a transport failure, nothing left and a retry may clear it."""


@dataclass
class MensageriaClient:
    """The SISBAJUD execution API of the Mensageria."""

    m2m: M2MSession
    base_url: str

    @classmethod
    def from_settings(cls, http: httpx.AsyncClient, settings: Settings) -> MensageriaClient:
        """The configured Mensageria, or the `esteira dev` simulator."""
        m2m = session_for(http, mensageria_credentials(settings),
                          settings.sisbajud.m2m_token_leeway_seconds)
        return cls(m2m, _mensageria_base(settings))

    def _url(self, order_id: str) -> str:
        return f"{self.base_url}/v1/sisbajud/execution/orders/{order_id}"

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self.m2m.request(method, url, **kwargs)
        except TokenUnavailable as exc:
            raise MensageriaTokenError(str(exc)) from exc

    async def fetch_order(self, order_id: str) -> httpx.Response:
        """`GET /v1/sisbajud/execution/orders/{orderId}` (raises httpx errors)."""
        return await self._send("GET", self._url(order_id))

    async def post_result(self, order_id: str, key: str, payload: dict[str, Any]
                          ) -> httpx.Response:
        """`POST …/{orderId}/execution-results` with `X-Idempotency` (raises httpx errors)."""
        return await self._send("POST", f"{self._url(order_id)}/execution-results",
                                json=payload, headers={"X-Idempotency": key})


def midaz_for(http: httpx.AsyncClient, settings: Settings, institution_id: str) -> MidazClient:
    """The configured institution's client (UnknownInstitution when it is not configured)."""
    for institution in settings.sisbajud.institutions:
        if institution.id == institution_id:
            return MidazClient.for_institution(http, settings, institution)
    raise UnknownInstitution(institution_id)


def _upstream(exc: TokenUnavailable) -> UpstreamError:
    """A token failure as Midaz's own 401 (refused) or a transport failure (unreachable)."""
    return UpstreamError(401 if exc.refused else None, "token", str(exc))


class UnknownInstitution(LookupError):
    """No institution with this id is configured in this executor."""


class LedgerActivities:
    """Base of the activity classes that talk to an institution's Midaz."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 http: httpx.AsyncClient) -> None:
        self._settings = settings
        self._sessions = sessions
        self._http = http

    def _midaz(self, institution_id: str) -> MidazClient:
        return midaz_for(self._http, self._settings, institution_id)
