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
                    end_time: int = 0) -> int:
        """Create or update the user and link it to the exit rule; idempotent. Returns its id."""
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
        return user_id

    async def revoke(self, registration: str) -> int:
        """Delete the user (its cards and rule links go with it); 0 changes is fine."""
        result = await self.call("destroy_objects", {
            "object": "users", "where": {"users": {"registration": registration}}})
        return int((result or {}).get("changes", 0))

    async def configure_monitor(self, url: httpx.URL) -> None:
        """Point the controller's Monitor pushes at `url` (`…/<path>/dao`, `/catra_event`)."""
        await self.call("set_configuration", {"monitor": {
            "hostname": url.host, "port": str(url.port or 80), "path": url.path.strip("/"),
            "request_timeout": "5000"}})


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
