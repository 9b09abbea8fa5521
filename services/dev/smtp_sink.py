"""A local SMTP sink (aiosmtpd) for approval e-mails in development and tests."""

from __future__ import annotations

import asyncio
import logging
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller

log = logging.getLogger("esteira.dev.smtp")
# aiosmtpd logs every connection, EOF and QUIT at INFO from its own thread; the sink's one
# line per message says what an operator needs.
logging.getLogger("mail.log").setLevel(logging.WARNING)


class _Collector:
    """Keeps every message received and, when given a folder, writes it there as `.eml`."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, _server, _session, envelope) -> str:  # aiosmtpd hook name
        message = message_from_bytes(envelope.content, policy=policy.default)
        self.messages.append(message)
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / f"{len(self.messages):06d}.eml").write_bytes(envelope.content)
        # Only the subject: bodies carry approver tokens.
        log.info("Mail to %s: %s", ", ".join(envelope.rcpt_tos), message["Subject"])
        return "250 Message accepted for delivery"


class SmtpSink:
    """An SMTP server on loopback that accepts everything and delivers nowhere."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 folder: Path | None = None) -> None:
        self.collector = _Collector(folder)
        self.controller = Controller(self.collector, hostname=host, port=port or _free_port(host))

    @property
    def port(self) -> int:
        """The port it listens on."""
        return self.controller.port

    @property
    def messages(self) -> list[EmailMessage]:
        """Every message received so far."""
        return self.collector.messages

    def __enter__(self) -> SmtpSink:
        self.controller.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.controller.stop()


def _free_port(host: str) -> int:
    import socket

    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


async def serve(host: str, port: int, folder: Path) -> None:
    """Run the sink until cancelled (`esteira dev` child)."""
    with SmtpSink(host, port, folder=folder):
        log.info("SMTP sink on %s:%s, messages in %s", host, port, folder)
        await asyncio.Event().wait()


if __name__ == "__main__":
    from shared.logs import configure_logging
    from shared.settings import Settings

    current = Settings()
    configure_logging(current, process="smtp-sink", to_file=False)
    logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd's per-command chatter
    asyncio.run(serve(current.host, current.ports.smtp, current.data_dir.resolve() / "mail"))
