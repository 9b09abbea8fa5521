"""The sd_notify protocol (READY, STOPPING, STATUS, WATCHDOG) over $NOTIFY_SOCKET, no library."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger("esteira.systemd")


def _address(environ: Mapping[str, str]) -> str | None:
    """The socket path; a leading `@` names Linux's abstract namespace."""
    path = environ.get("NOTIFY_SOCKET")
    if not path:
        return None
    return "\0" + path[1:] if path.startswith("@") else path


def notify(*fields: str, environ: Mapping[str, str] | None = None) -> bool:
    """Send `KEY=value` lines to systemd; False (and nothing sent) outside a notify unit."""
    address = _address(os.environ if environ is None else environ)
    if address is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            # Never block the event loop: a reader that stopped reading only loses pings.
            sock.setblocking(False)
            sock.sendto("\n".join(fields).encode(), address)
    except BlockingIOError:
        log.debug("systemd's notify socket is full; dropped %s", fields[0])
        return False
    except OSError as exc:
        # systemd going away must not take the service down with it.
        log.warning("Could not notify systemd at %s: %s", address.lstrip("\0"), exc)
        return False
    return True


def watchdog_interval(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds between WATCHDOG=1 pings: half of $WATCHDOG_USEC, when it is meant for us."""
    environ = os.environ if environ is None else environ
    usec, pid = environ.get("WATCHDOG_USEC"), environ.get("WATCHDOG_PID")
    if not usec or not usec.isdigit() or int(usec) == 0:
        return None
    if pid and pid != str(os.getpid()):
        return None
    return int(usec) / 2 / 1_000_000


async def keep_watchdog_fed(stop: asyncio.Event, environ: Mapping[str, str] | None = None) -> None:
    """Ping WATCHDOG=1 while this event loop runs, until `stop`; a hung loop stops the pings."""
    interval = watchdog_interval(environ)
    if interval is None:
        return
    while not stop.is_set():
        notify("WATCHDOG=1", environ=environ)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)


def ready(status: str = "", environ: Mapping[str, str] | None = None) -> bool:
    """READY=1 (with the MAINPID, since `esteira` may run under a wrapper), plus a STATUS line."""
    fields = ["READY=1", f"MAINPID={os.getpid()}"]
    return notify(*fields, *([f"STATUS={status}"] if status else []), environ=environ)


def stopping(environ: Mapping[str, str] | None = None) -> bool:
    """STOPPING=1: the service is draining."""
    return notify("STOPPING=1", "STATUS=Draining in-flight jobs", environ=environ)
