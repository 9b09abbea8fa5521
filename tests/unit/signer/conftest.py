"""Fixtures for the signer unit tests: dev certificates, a loaded signer, sample documents, a
job repository on a migrated store."""

import pytest
from cryptography import x509

from activities.signer.crypto import samples
from activities.signer.crypto.certs import DevBundle, write_dev_bundle
from activities.signer.crypto.signer import LoadedSigner, load_pfx_signer
from activities.signer.repository import JobRepository
from services.bootstrap import bootstrap
from shared.db.engine import create_engine, session_factory

from .support import PFX_PASSWORD


@pytest.fixture(scope="session")
def dev_bundle(tmp_path_factory: pytest.TempPathFactory) -> DevBundle:
    return write_dev_bundle(tmp_path_factory.mktemp("devcerts"), PFX_PASSWORD)


@pytest.fixture(scope="session")
def ca_cert(dev_bundle: DevBundle) -> x509.Certificate:
    return x509.load_pem_x509_certificate(dev_bundle.ca_pem.read_bytes())


@pytest.fixture(scope="session")
def other_ca_cert(tmp_path_factory: pytest.TempPathFactory) -> x509.Certificate:
    """A dev CA that did not issue the signer."""
    bundle = write_dev_bundle(tmp_path_factory.mktemp("othercerts"), "other")
    return x509.load_pem_x509_certificate(bundle.ca_pem.read_bytes())


@pytest.fixture(scope="session")
def signer(dev_bundle: DevBundle) -> LoadedSigner:
    return load_pfx_signer(dev_bundle.pfx, PFX_PASSWORD)


@pytest.fixture(scope="session")
def sample_pdf() -> bytes:
    return samples.make_pdf(100_000)


@pytest.fixture
async def repository(settings):
    """A job repository on the test's store, migrated and seeded."""
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    try:
        yield JobRepository(session_factory(engine))
    finally:
        await engine.dispose()
