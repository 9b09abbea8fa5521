"""A profile's level settings: `signature_level`, its TSAs, and a `csc` cloud certificate.

Secrets are never stored: a profile names the environment variables that hold them (as
`pfx_password_env` does), and only a worker reads them, when it signs or checks the profile.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from activities.signer.contracts.jobs import SignatureFormat
from activities.signer.crypto.csc import CscSpec
from activities.signer.crypto.levels import SignatureLevel, unsupported
from activities.signer.crypto.policy_catalogue import TIMESTAMPED_POLICIES
from activities.signer.crypto.timestamps import TSA_HASH_ALGORITHMS, TsaEndpoint, shown_url

LEVELS = tuple(level.value for level in SignatureLevel)
_ENV = r"^[A-Za-z_][A-Za-z0-9_]*$"


class TimestampConfig(BaseModel):
    """`timestamp`: TSAs tried in order, their authentication, digest and timeout."""

    model_config = {"extra": "forbid"}

    urls: list[str] = Field(min_length=1)
    auth: Literal["none", "basic", "bearer"] = "none"
    username: str | None = None
    password_env: str | None = Field(default=None, pattern=_ENV)
    token_env: str | None = Field(default=None, pattern=_ENV)
    hash_algorithm: Literal["sha256", "sha384", "sha512"] = "sha256"
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)

    @model_validator(mode="after")
    def _auth(self) -> TimestampConfig:
        for url in self.urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"TSA URL {shown_url(url)} is not http(s)")
            if shown_url(url) != url:
                raise ValueError("put TSA credentials in auth/username/password_env, not in "
                                 "the URL")
        if self.auth == "basic" and not (self.username and self.password_env):
            raise ValueError("timestamp auth basic needs username and password_env")
        if self.auth == "bearer" and not self.token_env:
            raise ValueError("timestamp auth bearer needs token_env")
        if self.auth == "none" and (self.username or self.password_env or self.token_env):
            raise ValueError("timestamp credentials need auth basic or bearer")
        return self


class CscConfig(BaseModel):
    """`csc`: a credential at a Cloud Signature Consortium API service."""

    model_config = {"extra": "forbid"}

    service_url: str = Field(pattern=r"^https?://")
    credential_id: str = Field(min_length=1, max_length=500)
    # An OAuth 2.0 access token, or static credentials exchanged at auth/login.
    token_env: str | None = Field(default=None, pattern=_ENV)
    username: str | None = None
    password_env: str | None = Field(default=None, pattern=_ENV)
    # Per the credential's authorization mode (credentials/info authMode): PIN and/or OTP.
    pin_env: str | None = Field(default=None, pattern=_ENV)
    otp_env: str | None = Field(default=None, pattern=_ENV)
    timeout_seconds: float = Field(default=30.0, gt=0, le=600)

    @model_validator(mode="after")
    def _one_way_in(self) -> CscConfig:
        if bool(self.token_env) == bool(self.username):
            raise ValueError("csc needs token_env (OAuth) or username with password_env "
                             "(static credentials), not both")
        if self.username and not self.password_env:
            raise ValueError("csc username needs password_env")
        return self


def check_level(*, level: str, fmt: str, timestamp: TimestampConfig | None, encrypt: bool,
                cert_source: str, csc: CscConfig | None, policy_name: str | None = None
                ) -> None:
    """Refuse a combination the worker could never honour (never a silent downgrade)."""
    chosen = SignatureLevel(level)
    if policy_name in TIMESTAMPED_POLICIES and not chosen.timestamped:
        raise ValueError(f"policy {policy_name} needs a timestamp: set signature_level B-T "
                         "or above (and its TSA)")
    if chosen.timestamped and timestamp is None:
        raise ValueError(f"signature_level {level} needs a timestamp block with TSA urls")
    if fmt == "auto" and chosen is not SignatureLevel.B_B:
        raise ValueError(f"signature_level {level} needs a fixed format (pades or cades): "
                         "XAdES stays at B-B here")
    if fmt != "auto" and (why := unsupported(SignatureFormat(fmt.capitalize()), chosen)):
        raise ValueError(why)
    if chosen is SignatureLevel.B_LTA and encrypt:
        raise ValueError("signature_level B-LTA is renewed in archive/, which needs the signed "
                         "PDF readable: it can't be combined with encrypt")
    if (cert_source == "csc") != (csc is not None):
        raise ValueError("cert_source csc and the csc block go together")
    if cert_source == "csc" and fmt in ("xades", "auto"):
        raise ValueError("cert_source csc signs PAdES or CAdES (signxml needs the key itself)")


def _env(name: str | None) -> str | None:
    return os.environ.get(name) if name else None


def tsa_endpoints(timestamp: dict[str, Any] | None) -> tuple[TsaEndpoint, ...]:
    """The profile's TSAs with their secrets read from the environment (in a worker)."""
    if not timestamp:
        return ()
    config = TimestampConfig(**timestamp)
    secret = _env(config.token_env) if config.auth == "bearer" else _env(config.password_env)
    return tuple(TsaEndpoint(url, auth=config.auth, username=config.username, secret=secret,
                             timeout_seconds=config.timeout_seconds) for url in config.urls)


def missing_secrets(timestamp: dict[str, Any] | None, csc: dict[str, Any] | None) -> list[str]:
    """Environment variables a profile names that are not set here (DEGRADED reasons)."""
    names = []
    if timestamp:
        names += [timestamp.get("token_env"), timestamp.get("password_env")]
    if csc:
        names += [csc.get(k) for k in ("token_env", "password_env", "pin_env", "otp_env")]
    return [n for n in names if n and n not in os.environ]


def csc_spec(csc: dict[str, Any] | None) -> CscSpec | None:
    """The remote credential with its secrets read from the environment (in a worker)."""
    if not csc:
        return None
    config = CscConfig(**csc)
    return CscSpec(service_url=config.service_url, credential_id=config.credential_id,
                   token=_env(config.token_env), username=config.username,
                   password=_env(config.password_env), pin=_env(config.pin_env),
                   otp=_env(config.otp_env), timeout_seconds=config.timeout_seconds)


def describe_level(level: str, timestamp: dict[str, Any] | None) -> str:
    """`B-LT (TSA http://tsa1, http://tsa2; sha256; auth basic ***)` for banner and pages."""
    if not timestamp:
        return level
    auth = timestamp.get("auth", "none")
    shown = "" if auth == "none" else f"; auth {auth} ***"
    urls = ", ".join(shown_url(u) for u in timestamp.get("urls", []))
    return f"{level} (TSA {urls}; {timestamp.get('hash_algorithm', 'sha256')}{shown})"


__all__ = ["LEVELS", "TSA_HASH_ALGORITHMS", "CscConfig", "TimestampConfig", "check_level",
           "csc_spec", "describe_level", "missing_secrets", "tsa_endpoints"]
