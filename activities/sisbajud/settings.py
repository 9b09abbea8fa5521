"""Settings of the sisbajud domain: the court-order executor and its institutions."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from activities.sisbajud.contracts.names import TASK_QUEUE
from shared.contracts.dev_credentials import DEV_M2M_SUBJECT
from shared.durations import seconds_of

# Ids of the ledger the Midaz simulator bootstraps for `esteira dev` (its default institution).
# `lerian`: Lerian's auth service (JSON); `oauth2`: RFC 6749 client credentials (form + Basic).
AuthMode = Literal["lerian", "oauth2"]
DEV_MIDAZ_ORGANIZATION_ID = "0190a000-0000-7000-8000-00000000e5e1"
DEV_MIDAZ_LEDGER_ID = "0190a000-0000-7000-8000-00000000e5e2"
# The seed's environment names, read beside `ESTEIRA_SISBAJUD__*` (which wins): setting <- name.
SEED_SISBAJUD_ENV = {
    "tick_every_seconds": "EXECUTOR_TICK_EVERY",
    "heartbeat_every_seconds": "EXECUTOR_HEARTBEAT_EVERY",
    "human_decision_after_beats": "EXECUTOR_HUMAN_DECISION_AFTER_BEATS",
    "response_deadline_margin_seconds": "RESPONSE_DEADLINE_MARGIN",
    "orphan_reconcile_window_seconds": "EXECUTOR_ORPHAN_RECONCILE_WINDOW",
    "hub_webhook_max_skew_seconds": "EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC",
    "m2m_subject": "EXECUTOR_M2M_SUBJECT",
    "systemplane_enabled": "SYSTEMPLANE_ENABLED",
}


class InstitutionSettings(BaseModel):
    """One institution the SISBAJUD executor writes for: its Midaz ledger and CRM."""

    # A mistyped or retired key (`token`) is refused by name rather than silently ignored.
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=100)
    # None: the Midaz simulator of `esteira dev` (http://<host>:<ports.midaz>).
    base_url: str | None = None
    # How this institution's tokens are asked for: `lerian` (Lerian's auth service, as
    # lib-auth and midaz-sdk-golang ask: JSON `{grantType, clientId, clientSecret}` to
    # `/v1/login/oauth/access_token`, answer `accessToken`) or `oauth2` (RFC 6749 client
    # credentials: a form with HTTP Basic, answer `access_token`).
    auth: AuthMode = "lerian"
    # The token endpoint (Midaz issues no tokens: its auth service does). None: the
    # simulator's, `{base_url}` + the mode's path (Development only).
    token_url: str | None = None
    client_id: str | None = None
    client_secret: SecretStr | None = None
    organization_id: str
    ledger_id: str
    crm_mode: str = Field(default="embedded", pattern="^(legacy|embedded)$")
    crm_base_url: str | None = None
    # Embedded CRM route: Midaz 4 serves `/v1/organizations/{org}/instruments`; the seed's
    # `/v2` exists in no Midaz release (kept for a gateway that maps it).
    crm_embedded_version: Literal["v1", "v2"] = "v1"
    # Block account lookup: the seed's `accounts?alias=` (a prefix match, filtered to the exact
    # alias here) or Midaz's exact route `accounts/alias/{alias}`.
    alias_lookup: Literal["query", "exact"] = "query"
    asset_code: str = "BRL"
    # Midaz has no salary flag: CRM `bankingDetails.type` values that mean "conta salário".
    salary_account_types: list[str] = Field(default_factory=lambda: ["SLRY"])


def _dev_institutions() -> list[InstitutionSettings]:
    return [InstitutionSettings(id="SIMBANK", organization_id=DEV_MIDAZ_ORGANIZATION_ID,
                                ledger_id=DEV_MIDAZ_LEDGER_ID)]


class SisbajudSettings(BaseModel):
    """`Sisbajud:*` — the court-order executor (the seed's `EXECUTOR_*`, see the README)."""

    model_config = ConfigDict(extra="forbid")

    tick_every_seconds: float = Field(default=30.0, gt=0)
    heartbeat_every_seconds: float = Field(default=300.0, gt=0)
    human_decision_after_beats: int = Field(default=3, ge=1)
    # An order's run continues as new past this many history events (Temporal warns at 10k).
    continue_as_new_after_events: int = Field(default=5_000, ge=10, le=40_000)
    response_deadline_margin_seconds: float = Field(default=3600.0, ge=0)
    orphan_reconcile_window_seconds: float = Field(default=48 * 3600.0, gt=0)
    # Each tick reads each ledger's transactions created since its previous read, and this
    # much before it (transactions committed while that read ran, or shown late by Midaz).
    orphan_scan_overlap_seconds: float = Field(default=60.0, ge=0)
    hub_webhook_max_skew_seconds: int = Field(default=300, ge=0)
    # Standard Webhooks secrets (`whsec_…`), several during a rotation; `esteira dev`
    # generates one into data/hub-webhook-secret when none is set.
    hub_webhook_secrets: list[SecretStr] = Field(default_factory=list)
    # The seed's EXECUTOR_M2M_SUBJECT: the owner this executor records on the institutions it
    # creates and compares them with; at boot the subject of each institution's token must
    # be this one (else the `sisbajud:connections` readiness line fails).
    m2m_subject: str = Field(default=DEV_M2M_SUBJECT, min_length=1)
    systemplane_enabled: bool = False
    # Lerian Systemplane: the tenant's PostgreSQL database holding `systemplane_entries` and
    # the namespace of the routing documents there. No DSN: the documents the admin API keeps
    # in this executor's store (development).
    systemplane_dsn: SecretStr | None = None
    systemplane_namespace: str = Field(default="sisbajud", min_length=1, max_length=200)
    # None: the Mensageria simulator of `esteira dev` (http://<host>:<ports.mensageria>).
    mensageria_url: str | None = None
    # The Mensageria's token request (`lerian` or `oauth2`, as for an institution) and its
    # endpoint; None: the simulator's, `{mensageria_url}` + the mode's path (Development only).
    mensageria_auth: AuthMode = "lerian"
    mensageria_token_url: str | None = None
    mensageria_client_id: str | None = None
    mensageria_client_secret: SecretStr | None = None
    # A cached token is renewed this long before it expires (Authlib's `leeway`).
    m2m_token_leeway_seconds: float = Field(default=60.0, ge=0)
    institutions: list[InstitutionSettings] = Field(default_factory=_dev_institutions)
    http_timeout_seconds: float = Field(default=15.0, gt=0)
    # The gateway's order fetch while the Hub waits on the delivery: past it, 503 and the
    # Hub redelivers (a hung Mensageria must not hold the Hub's connections).
    webhook_fetch_timeout_seconds: float = Field(default=5.0, gt=0)
    fetch_retry_initial_seconds: float = Field(default=1.0, gt=0)
    fetch_retry_max_seconds: float = Field(default=60.0, gt=0)
    # A worker lost mid-activity (kill -9, a dead node) is noticed within this: the write
    # and every other long activity (plans, block account, re-reads, fetch, tick stages)
    # beat a third of it.
    write_heartbeat_timeout_seconds: float = Field(default=10.0, gt=0)
    activity_heartbeat_timeout_seconds: float = Field(default=10.0, gt=0)
    parent_poll_seconds: float = Field(default=60.0, gt=0)
    parent_wait_max_seconds: float = Field(default=86400.0, gt=0)
    outbox_retry_initial_seconds: float = Field(default=5.0, gt=0)
    outbox_retry_max_seconds: float = Field(default=600.0, gt=0)
    batch_size: int = Field(default=200, ge=1, le=10_000)
    # Only to keep test runs apart; deployments use the contract's `sisbajud-v1`.
    task_queue: str = TASK_QUEUE

    @model_validator(mode="before")
    @classmethod
    def _seed_environment(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        seeded: dict[str, Any] = {name: os.environ[env] for name, env in SEED_SISBAJUD_ENV.items()
                  if os.environ.get(env) and name not in data}
        for name, value in seeded.items():
            if name.endswith("_seconds") and name != "hub_webhook_max_skew_seconds":
                seeded[name] = seconds_of(value)
        return {**data, **seeded}
