"""The Lacuna Signer simulator inside `esteira dev`: its address, key and webhook for children."""

from __future__ import annotations

import secrets

from services.simulators.lacuna.app import create_app
from services.simulators.lacuna.settings import LacunaSimSettings
from shared.settings import Settings

# The simulator's key; only ever used between `esteira dev` children on loopback.
DEV_SIM_API_KEY = "esteira-dev|lacuna-simulator"


def lacuna_dev_env(settings: Settings) -> dict[str, str]:
    """`ESTEIRA_SIGNER__*` pointing the children at the simulator (unless Signer:Url is set)."""
    if settings.signer.url or settings.environment != "Development":
        # Outside Development a missing Signer:Url is a DEGRADED reason, never the simulator.
        return {}
    return {"ESTEIRA_SIGNER__URL": f"http://{settings.host}:{settings.ports.lacuna}",
            "ESTEIRA_SIGNER__API_KEY": DEV_SIM_API_KEY,
            "ESTEIRA_SIGNER__WEBHOOK_TOKEN": secrets.token_urlsafe(24)}


def sim_settings(settings: Settings) -> LacunaSimSettings:
    """The simulator calls our webhook route back; each participant signs with their own
    certificate, from a CA kept in `data/pki` (a KEYLESS profile trusts that file)."""
    pki = settings.data_dir.resolve() / "pki"
    token = settings.signer.webhook_token
    webhook = (f"http://{settings.host}:{settings.ports.api}/api/signer/lacuna/webhook/"
               f"{token.get_secret_value()}") if token else None
    key = settings.signer.api_key.get_secret_value() if settings.signer.api_key \
        else DEV_SIM_API_KEY
    return LacunaSimSettings(host=settings.host, port=settings.ports.lacuna, api_key=key,
                             pfx_path=str(pki / "signer.pfx"),
                             pfx_password_file=str(pki / "signer.password"),
                             participant_certificates="own", participant_ca_dir=str(pki),
                             webhook_url=webhook)


def serve_lacuna(settings: Settings) -> None:
    """Run the simulator in the foreground (`esteira simulator lacuna`)."""
    import uvicorn

    sim = sim_settings(settings)
    # log_config=None: uvicorn's lines go through our logging (format, masking).
    uvicorn.run(create_app(sim), host=sim.host, port=sim.port, log_config=None)
