"""Dependencies the pickup activities share between the worker and the API."""

from __future__ import annotations

import httpx
from temporalio import activity
from temporalio.client import Client

from activities.pickup.turnstile_client import TurnstileClients
from shared.settings import PickupSettings, Settings

# Control iD's factory login; set ESTEIRA_PICKUP__TURNSTILE_PASSWORD for a real device.
FACTORY_PASSWORD = "admin"


async def activity_client() -> Client:
    """The client of the worker running the current activity."""
    return activity.client()


def turnstile_clients(settings: PickupSettings, http: httpx.AsyncClient) -> TurnstileClients:
    """Clients of the configured controllers, sharing `http`."""
    password = settings.turnstile_password
    return TurnstileClients(
        http, login=settings.turnstile_login,
        password=password.get_secret_value() if password else FACTORY_PASSWORD,
        timeout=settings.turnstile_timeout_seconds)


def dev_turnstile_url(settings: Settings) -> str:
    """A school without its own controller URL uses this: the setting, else `esteira dev`'s
    simulator on `ESTEIRA_PORTS__TURNSTILE`."""
    return settings.pickup.turnstile_url or f"http://{settings.host}:{settings.ports.turnstile}"
