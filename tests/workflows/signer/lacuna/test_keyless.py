"""KEYLESS profiles: the approvers sign at the Lacuna Signer with their own certificates."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from io import BytesIO
from pathlib import Path

import pytest_asyncio
from cryptography import x509
from pyhanko.pdf_utils.reader import PdfFileReader
from temporalio.worker import Worker

from activities.signer.contracts.jobs import JobStatus, task_queues
from activities.signer.crypto.samples import make_pdf
from activities.signer.crypto.verify import verify_pades
from activities.signer.lacuna.activities import AwaitingSignerActivities
from activities.signer.lacuna.client import LacunaClient
from activities.signer.lacuna.cpf import cpf_of
from activities.signer.lacuna.methods import RemoteMethods
from services.dev.lacuna_sim import sim_settings as dev_sim_settings
from services.simulators.lacuna import create_app
from services.simulators.lacuna.participant_pki import CA_FILE
from shared.settings import Settings, SignerSettings
from tests.support.lacuna import KEYLESS_APPROVERS, SIM_KEY, SimControl, keyless_profile
from tests.support.sisbajud import serve
from tests.workflows.signer.conftest import SignerHarness

AWAITING = {JobStatus.AWAITING_SIGNER.value}
CPFS = {a["cpf"] for a in KEYLESS_APPROVERS}


class Keyless:
    """The signer harness, the simulator (participants with their own certificates)."""

    def __init__(self, signer: SignerHarness, sim: SimControl, ca: x509.Certificate) -> None:
        self.signer, self.sim, self.ca = signer, sim, ca

    async def dispatch(self, name: str, profile: str) -> tuple[Path, str, dict]:
        """Drop a PDF for `profile`; return its path, job id and the Signer document."""
        path = self.signer.drop(name, make_pdf(8_000, pages=1))
        job = await self.signer.wait_for(
            (await self.signer.enqueue(path, profile=profile)).job_id, AWAITING)
        return path, job.id, await self.sim.document(job.remote_document_id)

    async def act(self, document: dict, cpf: str, verb: str) -> None:
        action = next(a for a in document["flowActions"] if a["user"]["identifier"] == cpf)
        await self.sim.act(document["id"], action["id"], verb)


@pytest_asyncio.fixture
async def keyless(signer: SignerHarness, settings: Settings, temporal_env
                  ) -> AsyncIterator[Keyless]:
    """Profiles `ambos` (quorum 2) and `um-basta` (quorum 1), trusting the simulator's CA
    as `make run` keeps it (`data/pki/lacuna-participants-ca.pem`)."""
    settings.signer = SignerSettings(api_key=SIM_KEY)
    with serve(create_app(dev_sim_settings(settings))) as url:
        sim = SimControl(url)
        ca_file = settings.data_dir.resolve() / "pki" / CA_FILE
        ca_pem = ca_file.read_bytes()
        assert ca_pem == (await sim.http.get("/_sim/ca.pem")).raise_for_status().content
        roots = [str(ca_file)]
        settings.signer = SignerSettings(url=url, api_key=SIM_KEY, poll_interval_seconds=0.2)
        client = LacunaClient.from_settings(settings)
        signer.activities.remote = RemoteMethods(client)
        async with signer.sessions() as session:
            session.add(keyless_profile("ambos", quorum=2, trust_roots=roots))
            session.add(keyless_profile("um-basta", quorum=1, trust_roots=roots))
            await session.commit()
        awaiting = AwaitingSignerActivities(signer.activities, client, settings.signer)
        jobs_queue, _ = task_queues(settings.pipeline.task_queue_suffix)
        try:
            async with Worker(temporal_env.client, task_queue=jobs_queue,
                              activities=[awaiting.check, awaiting.finish,
                                          awaiting.cancel_remote]):
                yield Keyless(signer, sim, x509.load_pem_x509_certificate(ca_pem))
        finally:
            await sim.http.aclose()
            await client.http.aclose()


def _signers(pdf: bytes) -> list[x509.Certificate]:
    return [x509.load_der_x509_certificate(s.signer_cert.dump())
            for s in PdfFileReader(BytesIO(pdf), strict=False).embedded_regular_signatures]


async def test_two_approvers_sign_with_their_own_certificates_and_the_job_completes(keyless):
    path, job_id, document = await keyless.dispatch("contrato.pdf", "ambos")
    # One Signer action per approver, with the CPF and e-mail of the approval block.
    assert sorted((a["type"], a["step"], a["user"]["identifier"], a["user"]["email"])
                  for a in document["flowActions"]) == sorted(
        ("Signer", 1, a["cpf"], a["email"]) for a in KEYLESS_APPROVERS)
    await keyless.act(document, KEYLESS_APPROVERS[0]["cpf"], "sign")
    # One of two is not the quorum: still waiting on the Signer.
    assert (await keyless.signer.repository.get(job_id)).status == JobStatus.AWAITING_SIGNER
    await keyless.act(document, KEYLESS_APPROVERS[1]["cpf"], "sign")
    done = await keyless.signer.wait_for(job_id, timeout=30)
    assert done.status == JobStatus.COMPLETED, done.error_message
    output = Path(done.output_path)
    assert output.parent == keyless.signer.storage.output and output.name == "contrato.signed.pdf"
    signed = output.read_bytes()
    verdict = await asyncio.to_thread(verify_pades, signed, trust_roots=[keyless.ca])
    assert verdict.ok and verdict.signatures == 2, verdict.reason
    certificates = _signers(signed)
    assert len({c.fingerprint(c.signature_hash_algorithm) for c in certificates}) == 2
    assert {cpf_of(c) for c in certificates} == CPFS
    assert not path.exists()
    steps = [h.to_status for h in await keyless.signer.history(job_id) if h.to_status]
    assert steps == ["Queued", "Processing", "AwaitingSigner", "Verifying", "Completed"]


async def test_an_approvers_refusal_is_a_veto_and_returns_the_file(keyless):
    path, job_id, document = await keyless.dispatch("folha.pdf", "ambos")
    await keyless.act(document, KEYLESS_APPROVERS[0]["cpf"], "sign")
    await keyless.act(document, KEYLESS_APPROVERS[1]["cpf"], "refuse")
    done = await keyless.signer.wait_for(job_id, timeout=30)
    assert (done.status, done.error_code) == (JobStatus.CANCELED, "approval.rejected")
    assert done.error_message == "Rejected by Bruno at the Lacuna Signer."
    returned = keyless.signer.storage.output / "folha.reject.pdf"
    assert Path(done.output_path) == returned and returned.exists()
    assert not path.exists()  # the input is removed, as for an approval veto
    assert not (keyless.signer.storage.output / "folha.signed.pdf").exists()
    [event] = [e for e in await keyless.signer.events("ApprovalDecided")
               if e.properties["jobId"] == job_id]
    assert (event.actor, event.properties["decision"]) == ("Bruno", "Rejected")


async def test_a_quorum_of_one_completes_on_the_first_signature_and_closes_the_flow(keyless):
    _, job_id, document = await keyless.dispatch("recibo.pdf", "um-basta")
    await keyless.act(document, KEYLESS_APPROVERS[1]["cpf"], "sign")
    done = await keyless.signer.wait_for(job_id, timeout=30)
    assert done.status == JobStatus.COMPLETED, done.error_message
    assert [cpf_of(c) for c in _signers(Path(done.output_path).read_bytes())] == [
        KEYLESS_APPROVERS[1]["cpf"]]
    # Ana need not sign any more: the Signer document is closed.
    assert (await keyless.sim.document(document["id"]))["status"] == "Canceled"
