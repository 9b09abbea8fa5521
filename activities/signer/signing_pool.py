"""The signing pool: pyHanko's processes, started and warmed before the worker polls."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from functools import partial

from activities.signer import engine
from activities.signer.contracts.lacuna import ProfileMethod
from activities.signer.models.jobs import SigningProfile
from activities.signer.profiles import certificate_spec

log = logging.getLogger("esteira.signer.worker")
# Spawning a process and importing pyHanko take a few seconds on a busy machine; a pool that
# takes longer still starts polling (its processes finish warming on their own).
WARM_TIMEOUT_SECONDS = 120.0


def signing_pool(size: int, initializer: Callable[[], None] | None,
                 profiles: Iterable[SigningProfile]) -> ProcessPoolExecutor:
    """`size` spawned processes; each imports the signing stack and opens these keys first."""
    # Processes, not threads: pyHanko's signing is CPU-bound Python and threads don't scale it.
    return ProcessPoolExecutor(
        max_workers=size, mp_context=multiprocessing.get_context("spawn"),
        initializer=partial(_start_process, initializer, warm_keys(profiles)))


def warm_keys(profiles: Iterable[SigningProfile]) -> tuple[engine.CertificateSpec, ...]:
    """The keys worth opening ahead: enabled local profiles with a PFX file."""
    specs = []
    for profile in profiles:
        # A PKCS#11 login at every start could lock a token; its first job opens it.
        if not profile.enabled or profile.cert_source == "pkcs11" \
                or profile.method != ProfileMethod.LOCAL:
            continue
        try:
            specs.append(certificate_spec(profile))
        except OSError:
            continue  # an unreadable password file: the first job reports it
    return tuple(specs)


async def start_all(pool: ProcessPoolExecutor, size: int) -> None:
    """Start every process of the pool now, so no job waits on (or pays for) a start."""
    loop = asyncio.get_running_loop()
    # Submitted together, before any can finish: each submit finds no idle process and
    # spawns one, so `size` tasks start `size` processes, each running its initializer.
    started = [loop.run_in_executor(pool, _started) for _ in range(size)]
    try:
        await asyncio.wait_for(asyncio.gather(*started), WARM_TIMEOUT_SECONDS)
    except Exception as exc:  # a broken pool fails the first job as a lost worker
        log.warning("The signing pool did not start in time (%r); polling anyway", exc)


def _start_process(initializer: Callable[[], None] | None,
                   certificates: tuple[engine.CertificateSpec, ...]) -> None:
    if initializer is not None:
        initializer()
    engine.warm(certificates)


def _started() -> bool:
    return True
