"""HTTP client of a Control iD-style turnstile controller (`POST /<command>.fcgi?session=`)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

# The factory "allow" rule (id 1) bound to the exit portal; a grant links a user to it.
EXIT_ACCESS_RULE_ID = 1


class TurnstileError(Exception):
    """The controller did not do what was asked."""


class TurnstileUnavailable(TurnstileError):
    """Unreachable, timed out or 5xx: the same command may succeed later."""


class TurnstileRejected(TurnstileError):
    """The controller refused the command (4xx): repeating it won't help."""


class TurnstileClient:
    """One controller: logs in, keeps the session, re-logs in once when it is refused."""

    def __init__(self, http: httpx.AsyncClient, base_url: str, *, login: str, password: str,
                 timeout: float) -> None:
        self._http = http
        self._base = base_url.rstrip("/")
        self._login = login
        self._password = password
        self._timeout = timeout
        self._session: str | None = None
        self._lock = asyncio.Lock()

    async def _post(self, command: str, body: dict[str, Any], *,
                    session: str | None = None) -> httpx.Response:
        params = {"session": session} if session else None
        try:
            return await self._http.post(f"{self._base}/{command}.fcgi", params=params,
                                         json=body, timeout=self._timeout)
        except httpx.HTTPError as exc:
            raise TurnstileUnavailable(f"{command}: {type(exc).__name__}: {exc}") from exc

    async def _open_session(self) -> str:
        response = await self._post("login", {"login": self._login, "password": self._password})
        _check("login", response)
        self._session = response.json()["session"]
        return self._session

    async def call(self, command: str, body: dict[str, Any]) -> Any:
        """Run one command in the session; a 401 opens a new session and tries once more."""
        async with self._lock:
            session = self._session or await self._open_session()
        response = await self._post(command, body, session=session)
        if response.status_code == 401:
            async with self._lock:
                session = await self._open_session()
            response = await self._post(command, body, session=session)
        _check(command, response)
        return response.json() if response.content else None

    async def find_user(self, registration: str) -> int | None:
        """The device id of the user with this registration, if any."""
        found = await self.call("load_objects", {
            "object": "users", "fields": ["id"],
            "where": {"users": {"registration": registration}}})
        users = (found or {}).get("users") or []
        return int(users[0]["id"]) if users else None

    async def grant(self, *, registration: str, name: str, begin_time: int = 0,
                    end_time: int = 0, card_value: int | None = None,
                    qr_value: str | None = None) -> int:
        """Create or update the user, link it to the exit rule and put its card / QR code on
        it with the same window; idempotent. Returns the user's id."""
        values = {"name": name or registration, "begin_time": begin_time, "end_time": end_time}
        user_id = await self.find_user(registration)
        if user_id is None:
            created = await self.call("create_objects", {
                "object": "users", "values": [{"registration": registration, **values}]})
            user_id = int(created["ids"][0])
        else:
            await self.call("modify_objects", {"object": "users", "values": values,
                                               "where": {"users": {"id": user_id}}})
        await self.call("create_or_modify_objects", {
            "object": "user_access_rules",
            "values": [{"user_id": user_id, "access_rule_id": EXIT_ACCESS_RULE_ID}]})
        window = {"begin_time": begin_time, "end_time": end_time}
        for table, value in _credentials(card_value, qr_value):
            await self._put_credential(table, value, user_id, window)
        return user_id

    async def _put_credential(self, table: str, value: int | str, user_id: int,
                              window: dict[str, int]) -> None:
        """The card / QR row with `value` on `user_id` and `window` (a value is unique)."""
        found = await self.call("load_objects", {
            "object": table, "where": {table: {"value": value}}})
        rows = (found or {}).get(table) or []
        if rows and int(rows[0]["user_id"]) == user_id:
            await self.call("modify_objects", {"object": table, "values": window,
                                               "where": {table: {"id": int(rows[0]["id"])}}})
            return
        if rows:  # the value was handed to someone else: the device keeps one owner
            await self.call("destroy_objects", {
                "object": table, "where": {table: {"id": int(rows[0]["id"])}}})
        await self.call("create_objects", {
            "object": table, "values": [{"value": value, "user_id": user_id, **window}]})

    async def revoke(self, registration: str, *, card_value: int | None = None,
                     qr_value: str | None = None) -> int:
        """Remove exactly that card / QR code of the user (the user goes once it holds none);
        with no credential, delete the user (its cards and rule links go with it).

        0 changes is fine: the credential or user is already gone."""
        credentials = _credentials(card_value, qr_value)
        if not credentials:
            return await self._destroy_user(registration)
        user_id = await self.find_user(registration)
        if user_id is None:
            return 0
        changes = 0
        for table, value in credentials:
            result = await self.call("destroy_objects", {
                "object": table, "where": {table: {"value": value, "user_id": user_id}}})
            changes += int((result or {}).get("changes", 0))
        if not await self._holds_any(user_id):
            changes += await self._destroy_user(registration)
        return changes

    async def _holds_any(self, user_id: int) -> bool:
        for table in ("cards", "qrcodes"):
            found = await self.call("load_objects", {
                "object": table, "fields": ["id"], "where": {table: {"user_id": user_id}}})
            if (found or {}).get(table):
                return True
        return False

    async def _destroy_user(self, registration: str) -> int:
        result = await self.call("destroy_objects", {
            "object": "users", "where": {"users": {"registration": registration}}})
        return int((result or {}).get("changes", 0))

    async def configure_monitor(self, url: httpx.URL) -> None:
        """Point the controller's Monitor pushes at `url` (`…/<path>/dao`, `/catra_event`)."""
        await self.call("set_configuration", {"monitor": {
            "hostname": url.host, "port": str(url.port or 80), "path": url.path.strip("/"),
            "request_timeout": "5000"}})


def _credentials(card_value: int | None, qr_value: str | None) -> list[tuple[str, Any]]:
    """(device table, value) of each credential given."""
    pairs = [("cards", card_value), ("qrcodes", qr_value)]
    return [(table, value) for table, value in pairs if value is not None]


def _check(command: str, response: httpx.Response) -> None:
    if response.is_success:
        return
    detail = response.text[:200]
    if response.status_code >= 500 or response.status_code in (408, 429):
        raise TurnstileUnavailable(f"{command}: HTTP {response.status_code} {detail}")
    raise TurnstileRejected(f"{command}: HTTP {response.status_code} {detail}")


class TurnstileClients:
    """One client per controller URL over a shared connection pool."""

    def __init__(self, http: httpx.AsyncClient, *, login: str, password: str,
                 timeout: float) -> None:
        self._http = http
        self._login = login
        self._password = password
        self._timeout = timeout
        self._clients: dict[str, TurnstileClient] = {}

    def for_url(self, base_url: str) -> TurnstileClient:
        """The client of the controller at `base_url`."""
        if base_url not in self._clients:
            self._clients[base_url] = TurnstileClient(
                self._http, base_url, login=self._login, password=self._password,
                timeout=self._timeout)
        return self._clients[base_url]
