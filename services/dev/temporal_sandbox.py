"""Temporal's dev server in a private network namespace: only its frontend is published.

The dev server runs its Web UI in the same process as its frontend, on a TCP port only, and
with no authentication of its own. Here that process lives in a network namespace of its own:
this launcher binds the frontend's published port on the host first, then leaves the host's
network, starts the server inside on loopback, and relays two doors into it: the frontend
port, and a Unix socket (0600, in a 0700 folder) to the UI for the read-only proxy. No
process outside can reach the UI's own port, whatever `ps` shows of it.

    python -m services.dev.temporal_sandbox --probe
    python -m services.dev.temporal_sandbox --frontend HOST:PORT --ui-port N --ui-socket PATH
        -- temporal server start-dev --ip 127.0.0.1 --port PORT --ui-port N ...
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import fcntl
import os
import signal
import socket
import struct
import sys
from pathlib import Path

from services.parent_death import die_with_parent

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS = 0x8913, 0x8914
_IFF_UP = 0x1
INSIDE = "127.0.0.1"
_CHUNK = 65536


class NoPrivateNetworkError(OSError):
    """The kernel refused a private network namespace to this user."""


def enter_private_network() -> None:
    """Move this (single-threaded) process into a new network namespace with loopback up.

    As root a network namespace is enough; otherwise an unprivileged user namespace maps this
    user to root inside it, which grants the right to bring its loopback up.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    attempts = [CLONE_NEWNET] if uid == 0 else []
    attempts.append(CLONE_NEWUSER | CLONE_NEWNET)
    for flags in attempts:
        if libc.unshare(flags) == 0:
            if flags & CLONE_NEWUSER:
                _map_user(uid, gid)
            _loopback_up()
            return
    errno = ctypes.get_errno()
    raise NoPrivateNetworkError(errno, f"unshare: {os.strerror(errno)}")


def _map_user(uid: int, gid: int) -> None:
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
    Path("/proc/self/gid_map").write_text(f"0 {gid} 1")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def probe() -> bool:
    """Whether a private network can be had here (run in a child: it can't be undone)."""
    try:
        enter_private_network()
        with socket.create_server((INSIDE, 0)):
            return True
    except OSError:
        return False


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(_CHUNK):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        pass


def relay_to(port: int):
    """A connection handler that joins the caller to `127.0.0.1:port` inside."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            inner_reader, inner_writer = await asyncio.open_connection(INSIDE, port)
        except OSError:  # the server is not up yet: the caller retries
            writer.close()
            return
        try:
            await asyncio.gather(_pipe(reader, inner_writer), _pipe(inner_reader, writer))
        finally:
            for end in (writer, inner_writer):
                end.close()
                with contextlib.suppress(ConnectionError, OSError):
                    await end.wait_closed()

    return handle


async def serve(frontend: socket.socket, ui: socket.socket, frontend_port: int, ui_port: int,
                command: list[str]) -> int:
    """Run the server inside, relay both doors, stop it on SIGTERM; its exit code."""
    server = await asyncio.create_subprocess_exec(
        *command, preexec_fn=lambda: die_with_parent(signal.SIGTERM))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.send_signal, signal.SIGTERM)
    doors = [await asyncio.start_server(relay_to(frontend_port), sock=frontend),
             await asyncio.start_unix_server(relay_to(ui_port), sock=ui)]
    try:
        return await server.wait()
    finally:
        for door in doors:
            door.close()


def _listen_unix(path: Path) -> socket.socket:
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    path.chmod(0o600)
    listener.listen(64)
    return listener


def main(argv: list[str] | None = None) -> int:
    """Parse, bind the doors on the host, leave its network, run the server."""
    parser = argparse.ArgumentParser(prog="temporal_sandbox")
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--frontend")
    parser.add_argument("--ui-port", type=int)
    parser.add_argument("--ui-socket", type=Path)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.probe:
        return 0 if probe() else 1
    host, _, port = args.frontend.rpartition(":")
    frontend = socket.create_server((host, int(port)))
    ui = _listen_unix(args.ui_socket)
    try:
        enter_private_network()
    except NoPrivateNetworkError as exc:
        print(f"level=error msg=\"no private network namespace: {exc}\"", flush=True)
        return 1
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    return asyncio.run(serve(frontend, ui, int(port), args.ui_port, command))


if __name__ == "__main__":
    sys.exit(main())
