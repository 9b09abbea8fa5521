"""`esteira dev`: Temporal, migrations, workers, APIs and simulators, then the banner."""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path
from typing import TextIO

import httpx

from services import sisbajud_cli, systemd_notify
from services.banner import host_mode, ready_rows, render
from services.banner_signer import signer_rows_and_panel
from services.bootstrap import bootstrap
from services.composition import compose
from services.dev.demo import demo_on, demo_rows, run_demo
from services.dev.lacuna_sim import lacuna_dev_env
from services.dev.live_view import ConsoleRouter, live_console
from services.dev.lock import DataDirBusyError, lock_data_dir
from services.dev.supervisor import ChildSpec, Supervisor
from services.dev.temporal_server import (
    EMBEDDED_EXTRA_HINT,
    LOOPBACK,
    PRIVATE_UMASK,
    TemporalCliNotFoundError,
    dev_server_args,
    find_temporal_cli,
)
from services.process import retry_until, stop_event
from shared.auth import ensure_generated_api_key
from shared.db.engine import create_engine, session_factory
from shared.db.models import utcnow
from shared.logs.files import DailyFileHandler, DailySizeRotatingFile
from shared.logs.masking import SecretMasker, secret_values
from shared.metrics import MULTIPROC_ENV, mark_process_dead, prepare_multiprocess_dir
from shared.settings import Settings
from shared.temporal import TemporalHandle, connect, payload_keys

READY_TIMEOUT_SECONDS = 90.0
PROBE_TIMEOUT_SECONDS = 15.0
# A worker drains in-flight activities for up to 30 s (services/worker/main.py).
WORKER_STOP_TIMEOUT = 40.0
log = logging.getLogger("esteira.dev")


class DevStartupError(RuntimeError):
    """`esteira dev` can't start; the message says why and what to do."""


async def run_dev(settings: Settings, masker: SecretMasker) -> int:
    """Boot everything, print the banner, run until SIGINT/SIGTERM, stop everything."""
    stop = stop_event()
    booted_at, console = utcnow(), ConsoleRouter()
    data_dir = settings.data_dir.resolve()
    _check_api_key_source(settings)
    embedded = temporal_mode(settings) == "embedded"
    _check_installed(settings, embedded=embedded)
    lock = _lock_data_dir(data_dir)
    _check_ports_free(settings, embedded=embedded)
    generated = settings.api_key is None and ensure_generated_api_key(settings.api_key_file)
    masker.add(_api_key_values(settings))
    key_file_existed = settings.payload_key_file.is_file()
    # Resolved (in Development generated) before any child starts, so all of them share it.
    keys = payload_keys(settings)
    masker.add(keys.secrets() if keys else [])
    run_dir = data_dir / "run"
    metrics_dir = run_dir / "metrics"
    prepare_multiprocess_dir(metrics_dir)
    log_file = DailySizeRotatingFile(
        settings.log_dir, size_limit_bytes=settings.logging.file_size_limit_mb * 1024 * 1024,
        retained=settings.logging.retained_file_count)
    _log_to(log_file)
    supervisor = Supervisor(_sink(log_file, masker, console),
                            on_exit=lambda pid: mark_process_dead(pid, metrics_dir),
                            foreign_format=logging.getLogger().handlers[0].formatter)
    child_env = {
        "ESTEIRA_CHILD": "1",
        "ESTEIRA_DATA_DIR": str(data_dir),
        # The supervisor is the only writer of the log file; children log to it through us.
        "ESTEIRA_LOGGING__TO_FILE": "false",
        MULTIPROC_ENV: str(metrics_dir),
        # One host, one exposition: the API's /api/metrics reads every child's through the
        # shared folder, and the supervisor restarts a child; no ops port per child.
        "ESTEIRA_PORTS__METRICS": "0",
        "PYTHONUNBUFFERED": "1",
        **lacuna_dev_env(settings),
    }
    # The UI door's Unix socket: a folder only this user can enter (paths stay short).
    ui_dir = Path(tempfile.mkdtemp(prefix="esteira-ui-"))
    drained = asyncio.Event()  # systemd's watchdog is fed until every child has drained
    try:
        watchdog = asyncio.create_task(systemd_notify.keep_watchdog_fed(drained))
        if embedded:
            await _start_embedded_temporal(settings, supervisor, child_env, ui_dir)
        if not await _wait_for_temporal(settings, stop):
            return 0
        warnings = await bootstrap(settings)
        for spec in _service_specs(child_env,
                                   simulators=settings.environment == "Development"):
            await supervisor.start(spec)
        ready = await _wait_for_ready(settings, stop)
        if stop.is_set():
            return 0
        banner = await _banner(settings, generated, warnings,
                               key_file_generated=not key_file_existed)
        for line in _banner_lines(settings, banner):
            log_file.write_line(line)
            print(line, file=sys.stderr, flush=True)
        # Type=notify: systemd reports "active (running)" only from here, after the banner.
        systemd_notify.ready(f"Service ready on http://{settings.host}:{settings.ports.api}")
        if not ready:
            log.warning("Not ready after %ss: see %s/api/ready/details",
                        READY_TIMEOUT_SECONDS, f"http://{settings.host}:{settings.ports.api}")
        demo = asyncio.create_task(_demo(settings)) if demo_on(settings) else None
        async with live_console(settings, console, booted_at=booted_at, host_mode=host_mode()):
            await stop.wait()
        if demo is not None:
            demo.cancel()
            await asyncio.gather(demo, return_exceptions=True)
        systemd_notify.stopping()
        log.info("Stopping Esteira (signal received)")
        return 0
    finally:
        await supervisor.stop()
        drained.set()
        await watchdog
        shutil.rmtree(ui_dir, ignore_errors=True)
        log.info("Esteira stopped; nothing left running")
        log_file.close()
        lock.close()


async def _demo(settings: Settings) -> None:
    """The first run's demo data, through the faces of this process (once per name)."""
    engine = create_engine(settings.sqlalchemy_url)
    try:
        await run_demo(settings, compose(settings, session_factory(engine),
                                         TemporalHandle.for_settings(settings)))
    finally:
        await engine.dispose()


def temporal_mode(settings: Settings) -> str:
    """`embedded` or `external`; outside Development the mode must be named."""
    mode = settings.temporal_server.mode
    if mode is None and settings.environment != "Development":
        raise DevStartupError(
            f"ESTEIRA_TEMPORAL_SERVER__MODE is required when ESTEIRA_ENVIRONMENT="
            f"{settings.environment}: `external` with TEMPORAL_ADDRESS (your Temporal cluster "
            "or Temporal Cloud), or `embedded` (Temporal's dev server on one SQLite file: one "
            "host, no high availability; see docs/deployment.md).")
    if mode == "external" and not settings.temporal.address:
        raise DevStartupError(
            "ESTEIRA_TEMPORAL_SERVER__MODE=external needs TEMPORAL_ADDRESS (host:port of the "
            "cluster's frontend), and TEMPORAL_NAMESPACE, TEMPORAL_API_KEY or TEMPORAL_TLS_* "
            "as the cluster requires.")
    return mode or "embedded"


async def _start_embedded_temporal(settings: Settings, supervisor: Supervisor,
                                   env: dict[str, str], ui_dir: Path) -> None:
    """Temporal's dev server and, without UI write actions, its read-only UI door.

    Without write actions the UI must be reachable through the door only: the server runs
    in a private network namespace and the door reaches the UI through a Unix socket in
    `ui_dir` (0700). Where the kernel allows no such namespace, the UI listens on a loopback
    port any local process can reach, and a warning says so.
    """
    if settings.temporal_server.ui_write_actions:
        await supervisor.start(ChildSpec("temporal", dev_server_args(settings),
                                         foreign_output=True, stop_timeout=20,
                                         umask=PRIVATE_UMASK))
        return
    ui_port = _free_loopback_port()
    if await _private_network_available():
        ui_socket = ui_dir / "temporal-ui.sock"
        command = [
            sys.executable, "-m", "services.dev.temporal_sandbox",
            "--frontend", f"{settings.temporal_server.bind_host}:{settings.ports.temporal}",
            "--ui-port", str(ui_port), "--ui-socket", str(ui_socket), "--",
            *dev_server_args(settings, ui_upstream_port=ui_port, private_network=True)]
        upstream = f"unix:{ui_socket}"
    else:
        log.warning("This host allows no private network namespace (unprivileged user "
                    "namespaces are off): the Temporal Web UI's own port %s on loopback is "
                    "reachable by every local process, past the read-only door", ui_port)
        command = dev_server_args(settings, ui_upstream_port=ui_port)
        upstream = f"http://{LOOPBACK}:{ui_port}"
    await supervisor.start(ChildSpec("temporal", command, foreign_output=True, stop_timeout=20,
                                     umask=PRIVATE_UMASK))
    await supervisor.start(_ui_door_spec(settings, upstream, env))


async def _private_network_available() -> bool:
    """Whether `temporal_sandbox` can run here (tried in a child: entering can't be undone)."""
    probe = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.dev.temporal_sandbox", "--probe",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    try:
        return await asyncio.wait_for(probe.wait(), PROBE_TIMEOUT_SECONDS) == 0
    except TimeoutError:
        probe.kill()
        await probe.wait()
        return False


def _service_specs(env: dict[str, str], *, simulators: bool) -> list[ChildSpec]:
    cli = [sys.executable, "-m", "services.cli"]
    # Stand-ins of the systems we don't own run only in Development: a production host
    # (systemd runs `esteira dev` too) must never sign, block or grant against a simulator.
    stand_ins = [
        # Stand-ins for Midaz and the Mensageria, where the SISBAJUD defaults point.
        ChildSpec("midaz-sim", [*cli, "simulator", "midaz"], env),
        ChildSpec("mensageria-sim", [*cli, "simulator", "mensageria"], env),
        # The Control iD-style controller the pickup ledger grants and revokes on.
        ChildSpec("turnstile-sim", [*cli, "simulator", "turnstile"], env),
        # The Lacuna Signer that LacunaSigner / SignerFolder profiles talk to.
        ChildSpec("lacuna-sim", [*cli, "simulator", "lacuna"], env),
        # Approval e-mails land here (data/mail/*.eml) unless Notifications:SmtpHost is set.
        ChildSpec("smtp-sink", [sys.executable, "-m", "services.dev.smtp_sink"], env),
    ] if simulators else []
    return [
        *stand_ins,
        ChildSpec("worker", [*cli, "worker", "--domains", "all"], env,
                  stop_timeout=WORKER_STOP_TIMEOUT),
        ChildSpec("grpc", [*cli, "grpc"], env),
        ChildSpec("watcher", [*cli, "watcher"], env),
        ChildSpec("api", [*cli, "api"], env),
        ChildSpec("webhook", [*cli, "webhook"], env),
    ]


def _ui_door_spec(settings: Settings, upstream: str, env: dict[str, str]) -> ChildSpec:
    return ChildSpec("temporal-ui", [
        sys.executable, "-m", "services.dev.temporal_ui_proxy",
        settings.temporal_server.bind_host, str(settings.ports.temporal_ui), upstream], env)


def _free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def _banner_lines(settings: Settings, banner: str) -> list[str]:
    """The banner as written: its lines, or in the JSON format one object holding it all."""
    if settings.logging.format != "json":
        return banner.splitlines()
    record = logging.LogRecord(log.name, logging.INFO, "", 0, banner, None, None)
    return [logging.getLogger().handlers[0].format(record)]


def _check_installed(settings: Settings, *, embedded: bool) -> None:
    """What this run needs from the `embedded` extra, named before anything starts."""
    if embedded:
        try:
            find_temporal_cli()
        except TemporalCliNotFoundError as exc:
            raise DevStartupError(str(exc)) from None
    if settings.environment == "Development" and find_spec("aiosmtpd") is None:
        raise DevStartupError(
            f"The local SMTP sink of Development needs the aiosmtpd package: "
            f"{EMBEDDED_EXTRA_HINT}.")


def _check_api_key_source(settings: Settings) -> None:
    """Only Development may generate the API key: elsewhere it must be configured."""
    if settings.environment != "Development" and not (
            settings.api_key is not None and settings.api_key.get_secret_value()):
        raise DevStartupError(
            f"ESTEIRA_API_KEY is required when ESTEIRA_ENVIRONMENT={settings.environment}: "
            "`esteira dev` generates a key only in Development.")


def _lock_data_dir(data_dir: Path) -> TextIO:
    """Refuse a second `esteira dev` (or a restore in progress) on the same data directory."""
    try:
        return lock_data_dir(data_dir, holder="esteira dev")
    except DataDirBusyError as busy:
        raise DevStartupError(
            f"Another `esteira dev` or an `esteira restore` ({busy.holder}) is using {data_dir}; "
            "stop it first or set ESTEIRA_DATA_DIR to another folder."
        ) from None


def _check_ports_free(settings: Settings, *, embedded: bool = True) -> None:
    ports = settings.ports
    temporal = {"ESTEIRA_PORTS__TEMPORAL": ports.temporal,
                "ESTEIRA_PORTS__TEMPORAL_UI": ports.temporal_ui} if embedded else {}
    wanted = {"ESTEIRA_PORTS__API": ports.api, "ESTEIRA_PORTS__GRPC": ports.grpc, **temporal,
              "ESTEIRA_PORTS__WEBHOOK": ports.webhook, "ESTEIRA_PORTS__MIDAZ": ports.midaz,
              "ESTEIRA_PORTS__MENSAGERIA": ports.mensageria,
              "ESTEIRA_PORTS__TURNSTILE": ports.turnstile, "ESTEIRA_PORTS__LACUNA": ports.lacuna,
              "ESTEIRA_PORTS__SMTP": ports.smtp}
    busy = [f"{key}={port}" for key, port in wanted.items() if not _port_free(settings.host, port)]
    if busy:
        raise DevStartupError(
            f"Port(s) already in use on {settings.host}: {', '.join(busy)}. Stop what uses them "
            "or choose other ports with those settings."
        )


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _log_to(log_file: DailySizeRotatingFile) -> None:
    """Send this process's own records to the shared log file too."""
    root = logging.getLogger()
    handler = DailyFileHandler(log_file)
    handler.setFormatter(root.handlers[0].formatter)
    root.addHandler(handler)


def _sink(log_file: DailySizeRotatingFile, masker: SecretMasker, console: ConsoleRouter):
    def write(line: str, to_console: bool) -> None:
        line = masker.mask(line)
        log_file.write_line(line)
        if to_console:
            console.write(line)

    return write


def _api_key_values(settings: Settings) -> list[str]:
    values = secret_values(settings)
    if settings.api_key_file.is_file():
        values.append(settings.api_key_file.read_text().strip())
    return values


async def _wait_for_temporal(settings: Settings, stop: asyncio.Event) -> bool:
    async def healthy() -> bool:
        client = await connect(settings)
        if not await client.service_client.check_health():
            raise RuntimeError("not serving yet")
        return True

    return await retry_until(f"Waiting for Temporal at {settings.temporal_address}", healthy, stop,
                             max_delay=1.0) is not None


async def _wait_for_ready(settings: Settings, stop: asyncio.Event) -> bool:
    url = f"http://{settings.host}:{settings.ports.api}/api/ready"
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    async with httpx.AsyncClient(timeout=5) as http:
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                if (await http.get(url)).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            try:
                await asyncio.wait_for(stop.wait(), 0.5)
            except TimeoutError:
                continue
    return False


def _codec_note(settings: Settings, keys, *, generated: bool) -> str:
    """The banner's payload codec row: on or off, which key encrypts, where keys come from."""
    if keys is None:
        return "off (ESTEIRA_PAYLOAD_CODEC__ENABLED=false): Temporal payloads in clear"
    codec = settings.payload_codec
    if codec.keys is not None and codec.keys.get_secret_value().strip():
        source = "from ESTEIRA_PAYLOAD_CODEC__KEYS"
    else:
        verb = "generated into" if generated else "read from"
        source = f"{verb} {settings.payload_key_file} (mode 0600)"
    return (f"AES-256-GCM, key {keys.current} encrypts ({len(keys.keys)} known), {source}; "
            f"codec server http://{settings.host}:{settings.ports.api}/api/temporal-codec")


async def _banner(settings: Settings, generated: bool, warnings: list[str], *,
                  key_file_generated: bool = False) -> str:
    engine = create_engine(settings.sqlalchemy_url)
    try:
        # The banner's faces: nothing here needs Temporal, so the handle never connects.
        faces = compose(settings, session_factory(engine), TemporalHandle.for_settings(settings))
        state = await faces.signer.pipeline.state()
        signer_rows, profiles_panel = await signer_rows_and_panel(faces.signer)
        connection_rows = await faces.sisbajud.connections.rows()
    finally:
        await engine.dispose()
    pipeline = f"paused ({state.reason})" if state.paused else "running"
    if settings.api_key is not None:
        key_note = "from ESTEIRA_API_KEY"
    else:
        verb = "generated into" if generated else "read from"
        key_note = f"{verb} {settings.api_key_file} (mode 0600)"
    rows = ready_rows(settings, pipeline=pipeline, api_key_note=key_note,
                      extra=[*signer_rows, *sisbajud_cli.banner_rows(settings),
                             ("payload codec", _codec_note(
                                 settings, payload_keys(settings, generate=False),
                                 generated=key_file_generated)),
                             *connection_rows,
                             *(demo_rows(settings)
                               if settings.environment == "Development" else [])])
    notes = "".join(f"\nWARN {warning}" for warning in warnings)
    return render("Service ready", rows) + "\n" + profiles_panel + notes
