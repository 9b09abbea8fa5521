"""A signer deployment wired to the Lacuna Signer simulator (real HTTP on loopback)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.worker import Worker

from activities.signer.contracts.jobs import task_queues
from activities.signer.lacuna.activities import AwaitingSignerActivities
from activities.signer.lacuna.client import LacunaClient
from activities.signer.lacuna.discovery import SignerFolderScanner
from activities.signer.lacuna.methods import RemoteMethods
from services.simulators.lacuna import LacunaSimSettings, create_app
from shared.settings import Settings, SignerSettings
from tests.support.lacuna import (
    HOLDER_CPF,
    SIM_KEY,
    HolderPki,
    SimControl,
    remote_profile,
    write_holder_pki,
)
from tests.support.sisbajud import serve
from tests.workflows.signer.conftest import SignerHarness

FOLDER = "fold-1"
PARTICIPANT = {"name": "Fulano", "identifier": "98765432100", "email": "fulano@example.com"}
WEBHOOK_TOKEN = "hook-token-0123456789"


@pytest.fixture(scope="session")
def holder_pki(tmp_path_factory) -> HolderPki:
    """A holder certificate with a CPF, for SignerFolder profiles."""
    return write_holder_pki(tmp_path_factory.mktemp("holder-pki"))


@dataclass
class RemoteHarness:
    """The signer harness plus the simulator, its controls and the AwaitingSigner side."""

    signer: SignerHarness
    sim: SimControl
    sim_settings: LacunaSimSettings
    client: LacunaClient
    awaiting: AwaitingSignerActivities
    scanner: SignerFolderScanner
    jobs_queue: str
    temporal_client: object

    @contextlib.asynccontextmanager
    async def worker(self) -> AsyncIterator[None]:
        """The jobs-queue worker of the AwaitingSigner activities, for the block."""
        async with Worker(self.temporal_client, task_queue=self.jobs_queue,
                          activities=[self.awaiting.check, self.awaiting.finish,
                                      self.awaiting.cancel_remote]):
            yield


@pytest_asyncio.fixture
async def remote(signer: SignerHarness, settings: Settings, temporal_env,
                 holder_pki: HolderPki) -> AsyncIterator[RemoteHarness]:
    """Profiles `remote` (LacunaSigner) and `holder` (SignerFolder on `fold-1`)."""
    pki = settings.data_dir / "pki"
    sim_settings = LacunaSimSettings(api_key=SIM_KEY, pfx_path=str(pki / "signer.pfx"),
                                     pfx_password_file=str(pki / "signer.password"),
                                     folders=f"{FOLDER},fold-2")
    with serve(create_app(sim_settings)) as url:
        # Short poll: tests wait out a few intervals at most.
        settings.signer = SignerSettings(url=url, api_key=SIM_KEY, poll_interval_seconds=0.2,
                                         webhook_token=WEBHOOK_TOKEN)
        client = LacunaClient.from_settings(settings)
        signer.activities.remote = RemoteMethods(client)
        base = await signer.profile()
        async with signer.sessions() as session:
            session.add(remote_profile(base, "remote", method="LacunaSigner",
                                       signer_flow=[{"type": "Signer", "step": 1,
                                                     "user": PARTICIPANT}]))
            session.add(remote_profile(base, "holder", method="SignerFolder",
                                       signer_folder_id=FOLDER,
                                       pfx_path=str(holder_pki.pfx),
                                       pfx_password_file=str(holder_pki.password_file),
                                       trust_roots=[str(holder_pki.ca_pem)]))
            await session.commit()
        awaiting = AwaitingSignerActivities(signer.activities, client, settings.signer)
        scanner = SignerFolderScanner(signer.repository, signer.enqueuer, client)
        jobs_queue, _ = task_queues(settings.pipeline.task_queue_suffix)
        sim = SimControl(url)
        try:
            yield RemoteHarness(signer, sim, sim_settings, client, awaiting, scanner,
                                jobs_queue, temporal_env.client)
        finally:
            await sim.http.aclose()
            await client.http.aclose()


def holder_flow(*, step: int = 1) -> list[dict]:
    """A flow whose action at `step` is the holder's."""
    return [{"type": "Signer", "step": step,
             "user": {"name": "Titular", "identifier": HOLDER_CPF, "email": "t@example.com"}}]


def ca_of(path: str | Path) -> bytes:
    """A trust root's PEM bytes."""
    return Path(path).read_bytes()
