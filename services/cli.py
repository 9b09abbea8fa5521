"""`esteira`: the one entry point for every process and operator command."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from services import sisbajud_cli
from services.backup import cli as backup_cli
from shared.auth import MissingApiKeyError
from shared.logs import configure_logging
from shared.settings import ConfigurationError, Settings, load_settings
from shared.tracing import configure_tracing
from shared.version import short_version

EXIT_CONFIG = 2
log = logging.getLogger("esteira")


def start_process(settings: Settings, process: str) -> None:
    """Logging and, when an OTLP endpoint is set, traces for a long-running process."""
    configure_logging(settings, process=process)
    configure_tracing(settings, process=process)


def _dev(settings: Settings, args: argparse.Namespace) -> int:
    from services.dev.main import DevStartupError, run_dev

    # run_dev owns the log file: it is the one writer for its own lines and its children's.
    masker = configure_logging(settings, process="dev", to_file=False)
    if settings.logging.format == "json":
        log.info("Esteira v%s", short_version())
    else:
        print(f"Esteira v{short_version()}", file=sys.stderr, flush=True)
    try:
        return asyncio.run(run_dev(settings, masker))
    except DevStartupError as exc:
        log.critical("%s", exc)
        return 1


def _migrate(settings: Settings, args: argparse.Namespace) -> int:
    from services.bootstrap import bootstrap
    from services.search_attributes import register_and_exit

    configure_logging(settings, process="migrate")
    asyncio.run(bootstrap(settings))
    register_and_exit(settings)


def _worker(settings: Settings, args: argparse.Namespace) -> int:
    from services.worker.domains import UnknownDomainError, select
    from services.worker.main import run_worker

    start_process(settings, "worker")
    try:
        domains = select(args.domains)
    except UnknownDomainError as exc:
        log.critical("%s", exc)
        return EXIT_CONFIG
    asyncio.run(run_worker(settings, domains))
    return 0


def _api(settings: Settings, args: argparse.Namespace) -> int:
    from services.app_main import run_api

    start_process(settings, "api")
    asyncio.run(run_api(settings))
    return 0


def _grpc(settings: Settings, args: argparse.Namespace) -> int:
    from services.grpc_server.main import run_grpc

    start_process(settings, "grpc")
    asyncio.run(run_grpc(settings))
    return 0


def _watcher(settings: Settings, args: argparse.Namespace) -> int:
    from services.watcher.main import run_watcher

    start_process(settings, "watcher")
    asyncio.run(run_watcher(settings))
    return 0


def _decrypt(settings: Settings, args: argparse.Namespace) -> int:
    from activities.signer.operator import DecryptFailed
    from services.composition import compose
    from shared.db.engine import create_engine, session_factory
    from shared.temporal import TemporalHandle

    # Nothing connects: decrypting reads one file and writes another.
    outputs = compose(settings, session_factory(create_engine(settings.sqlalchemy_url)),
                      TemporalHandle.for_settings(settings)).signer.outputs
    if not outputs.encryption_configured:
        print("No ESTEIRA_SIGNING__ENCRYPTION_PASSPHRASE is configured.", file=sys.stderr)
        return EXIT_CONFIG
    source = Path(args.file)
    target = Path(args.output) if args.output else source.with_name(
        source.name.removesuffix(".enc"))
    if target == source or target.exists():
        print(f"Refusing to overwrite {target}; pass -o with a new name.", file=sys.stderr)
        return 1
    try:
        outputs.decrypt(source, target)
    except (DecryptFailed, OSError) as exc:
        print(f"Could not decrypt {source}: {exc}", file=sys.stderr)
        return 1
    print(target)
    return 0


def _payload_key(_settings: Settings, _args: argparse.Namespace) -> int:
    from shared.payload_codec import new_key_entry

    # Printed for the operator to store as a secret; appended to PayloadCodec:Keys it encrypts.
    print(new_key_entry())
    return 0


def _status(settings: Settings, args: argparse.Namespace) -> int:
    from services.status import print_status

    configure_logging(settings, process="status", to_file=False)
    return asyncio.run(print_status(settings))


COMMANDS: dict[str, tuple[str, Callable[[Settings, argparse.Namespace], int]]] = {
    "dev": ("run everything on this machine (Temporal, workers, APIs, simulators)", _dev),
    "migrate": ("apply migrations, seed signing profiles, create storage folders, register "
                "Temporal search attributes", _migrate),
    "worker": ("run Temporal workers for some domains", _worker),
    "api": ("run the REST API", _api),
    "grpc": ("run the gRPC server", _grpc),
    "watcher": ("watch the input folders and turn stable files into jobs", _watcher),
    "status": ("show what is running, queue sizes and the pause state", _status),
    "decrypt": ("decrypt a BSENC v1 artifact (.enc) with this deployment's key", _decrypt),
    "payload-key": ("print a new Temporal payload key entry (`id:base64`) for "
                    "ESTEIRA_PAYLOAD_CODEC__KEYS", _payload_key),
    **backup_cli.COMMANDS,
    **sisbajud_cli.COMMANDS,
}


def parser() -> argparse.ArgumentParser:
    """The command line."""
    root = argparse.ArgumentParser(prog="esteira", description=__doc__)
    root.add_argument("--version", action="version", version=f"esteira {short_version()}")
    commands = root.add_subparsers(dest="command", required=True, metavar="command")
    for name, (help_text, _) in COMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if name == "decrypt":
            sub.add_argument("file", help="the .enc artifact")
            sub.add_argument("-o", "--output", help="where to write (default: name without .enc)")
        if name == "worker":
            sub.add_argument("--domains", default="all",
                             help="comma-separated domains to run, or `all` (default)")
        backup_cli.add_arguments(name, sub)
        sisbajud_cli.add_arguments(name, sub)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, load settings (refusing bad ones by key), run the command."""
    args = parser().parse_args(argv)
    try:
        settings = load_settings()
    except ConfigurationError as exc:
        print(exc, file=sys.stderr)
        return EXIT_CONFIG
    try:
        return COMMANDS[args.command][1](settings, args)
    except (MissingApiKeyError, ConfigurationError) as exc:
        log.critical("%s", exc)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
