"""Signing profiles: the config shape, first-boot seeding, the dev PKI, opening certificates."""

from __future__ import annotations

import base64
import logging
import os
import secrets
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.contracts.jobs import SignatureFormat
from activities.signer.contracts.lacuna import ProfileMethod, ProfileSigners
from activities.signer.engine import (
    CertificateSpec,
    allowed_pkcs11_modules,
    inside_directories,
    key_directories,
)
from activities.signer.folder_seed import (
    default_folder,
    folders_by_profile,
    ignored_input_keys,
    unbound_input_keys,
)
from activities.signer.level_config import (
    LEVELS,
    CscConfig,
    TimestampConfig,
    check_level,
    csc_spec,
)
from activities.signer.models.jobs import SigningProfile
from activities.signer.policy_config import check_catalogue_policy, policy_name_alias
from shared.settings import ConfigurationError, Settings

log = logging.getLogger("esteira.signer.profiles")
DEV_PKI_DIR = "pki"
NO_PROFILE_WARNING = ("No signing profile is configured (ESTEIRA_SIGNING__PROFILES): nothing "
                      "is signed and readiness reports signing-profile:none. Outside "
                      "Development no development certificate is generated.")


class PolicyConfig(BaseModel):
    """A signature policy identifier, e.g. ICP-Brasil AD-RB: OID, hash of the policy, URI."""

    oid: str = Field(pattern=r"^\d+(\.\d+)+$")
    hash_algorithm: Literal["sha256", "sha384", "sha512"] = "sha256"
    hash_base64: str
    uri: str | None = None

    @field_validator("hash_base64")
    @classmethod
    def _decodes(cls, value: str) -> str:
        base64.b64decode(value, validate=True)
        return value


class ApproverConfig(BaseModel):
    """One person who may approve or reject a held job."""

    name: str = Field(min_length=1, max_length=200)
    email: str = Field(min_length=3, max_length=320, pattern=r"^[^@\s]+@[^@\s]+$")
    # Needed when the approvers are the signers (KEYLESS): the Signer action's identifier.
    cpf: str | None = Field(default=None, pattern=r"^\d{11}$")


class ApprovalConfig(BaseModel):
    """A profile's `Approval` block: who decides, how many must approve, for how long."""

    approvers: list[ApproverConfig] = Field(min_length=1)
    quorum: int = Field(default=1, ge=1)
    expires_after_seconds: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _reachable(self) -> ApprovalConfig:
        if self.quorum > len(self.approvers):
            raise ValueError(f"quorum {self.quorum} is more than the "
                             f"{len(self.approvers)} approver(s)")
        names = [a.name.lower() for a in self.approvers]
        if len(set(names)) != len(names):
            raise ValueError("approver names must be unique")
        return self


class ProfileConfig(BaseModel):
    """One `Signing:Profiles[]` entry."""

    model_config = {"extra": "forbid"}

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    format: Literal["auto", "pades", "cades", "xades"] = "auto"
    # "none": a KEYLESS profile (signers = Approvers) holds no key; "csc": a cloud
    # certificate at a Cloud Signature Consortium API service (the `csc` block).
    cert_source: Literal["pfx", "pkcs11", "none", "csc"] = "pfx"
    pfx_path: str | None = None
    pfx_password_env: str | None = None
    pfx_password_file: str | None = None
    pkcs11_module: str | None = None
    pkcs11_token_label: str | None = None
    pkcs11_thumbprint: str | None = None
    pkcs11_pin_env: str | None = None
    trust_roots: list[str] = Field(default_factory=list)
    verify: bool = True
    validate_certificate: bool = True
    policy: PolicyConfig | None = None
    # A catalogue policy (AD-RB): the format picks its PAdES/CAdES/XAdES entry; the operator
    # supplies the policy document and its published SHA-256, checked when a worker boots.
    policy_name: str | None = None
    policy_document: str | None = None
    policy_digest: str | None = None
    encrypt: bool = False
    enabled: bool = True
    input_folder: str | None = None
    method: Literal["Local", "LacunaSigner", "SignerFolder"] = "Local"
    # LacunaSigner: the flow's actions, e.g. {type: Signer, step: 1, name, identifier (CPF),
    # email}; SignerFolder: the Signer folder this host signs in.
    signer_flow: list[dict] = Field(default_factory=list)
    signer_folder_id: str | None = None
    approval: ApprovalConfig | None = None
    check_cnab240_payment_dates: bool = True
    # Approvers: KEYLESS — the approval block's people sign at the Lacuna Signer.
    signers: Literal["Holder", "Approvers"] = "Holder"
    # B-B (no trusted time), B-T (a TSA's timestamp), B-LT (+ certificates and revocation
    # data), B-LTA (+ a document timestamp, renewed in archive/); see crypto/levels.py.
    signature_level: Literal[LEVELS] = "B-B"  # type: ignore[valid-type]
    timestamp: TimestampConfig | None = None
    # Seconds an OCSP responder or CRL distribution point may take at B-LT and B-LTA.
    revocation_timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    csc: CscConfig | None = None

    @model_validator(mode="before")
    @classmethod
    def _policy_by_name(cls, data: Any) -> Any:
        return policy_name_alias(data)

    @model_validator(mode="after")
    def _catalogue_policy(self) -> ProfileConfig:
        check_catalogue_policy(name=self.policy_name, document=self.policy_document,
                               digest=self.policy_digest, fmt=self.format,
                               explicit=self.policy is not None)
        return self

    @model_validator(mode="after")
    def _level(self) -> ProfileConfig:
        check_level(level=self.signature_level, fmt=self.format, timestamp=self.timestamp,
                    encrypt=self.encrypt, cert_source=self.cert_source, csc=self.csc,
                    policy_name=self.policy_name)
        return self

    @model_validator(mode="after")
    def _keyless(self) -> ProfileConfig:
        if self.signers != ProfileSigners.APPROVERS:
            if self.cert_source == "none":
                raise ValueError("cert_source none is only for signers Approvers (KEYLESS)")
            return self
        if self.approval is None or any(a.cpf is None for a in self.approval.approvers):
            raise ValueError("signers Approvers needs an approval block whose approvers all "
                             "have a cpf")
        if self.pfx_path or self.pkcs11_module or self.signer_flow \
                or self.method == ProfileMethod.SIGNER_FOLDER:
            raise ValueError("signers Approvers holds no key and has no flow of its own: "
                             "leave pfx_path, pkcs11_module, signer_flow and method unset")
        # The approvers sign at the Lacuna Signer; nothing here holds or opens a key.
        self.cert_source, self.method = "none", ProfileMethod.LACUNA_SIGNER.value
        return self


def format_for(profile_format: str, file_name: str) -> SignatureFormat:
    """The profile's format, or by extension: PAdES for .pdf, XAdES for .xml, else CAdES."""
    if profile_format != "auto":
        return SignatureFormat(profile_format.capitalize())
    suffix = Path(file_name).suffix.lower()
    if suffix == ".pdf":
        return SignatureFormat.PADES
    if suffix == ".xml":
        return SignatureFormat.XADES
    return SignatureFormat.CADES


def output_name(fmt: SignatureFormat, file_name: str, *, encrypted: bool) -> str:
    """`x.signed.pdf`, `x.rem.p7m`, `x.signed.xml`, plus `.enc` when encrypted."""
    path = Path(file_name)
    if fmt is SignatureFormat.PADES:
        name = f"{path.stem}.signed{path.suffix or '.pdf'}"
    elif fmt is SignatureFormat.XADES:
        name = f"{path.stem}.signed{path.suffix or '.xml'}"
    else:
        name = f"{path.name}.p7m"
    return name + ".enc" if encrypted else name


def unlisted_module(config: ProfileConfig, settings: Settings) -> str | None:
    """Why the profile's PKCS#11 module may not be loaded here (None: it may)."""
    if config.cert_source != "pkcs11" or config.pkcs11_module is None:
        return None
    if config.pkcs11_module in settings.signing.pkcs11_modules:
        return None
    return (f"PKCS#11 module {config.pkcs11_module} is not one of the modules this deployment "
            "allows (ESTEIRA_SIGNING__PKCS11_MODULES)")


def parse_profiles(raw: list[dict]) -> list[ProfileConfig]:
    """Validate `Signing:Profiles[]`, naming the entry and key that is wrong."""
    profiles = []
    for index, entry in enumerate(raw):
        try:
            profiles.append(ProfileConfig(**entry))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                 for e in exc.errors())
            raise ConfigurationError(
                f"Invalid configuration: ESTEIRA_SIGNING__PROFILES[{index}]: {problems}"
            ) from None
    return profiles


async def seed_profiles(sessions: async_sessionmaker[AsyncSession], settings: Settings
                        ) -> list[str]:
    """On the first boot with an empty profile table, create profiles; return warnings."""
    configured = parse_profiles(settings.signing.profiles)
    for config in configured:
        if (why := unlisted_module(config, settings)) is not None:
            raise ConfigurationError(f"Invalid configuration: ESTEIRA_SIGNING__PROFILES "
                                     f"({config.name}): {why}")
    folder_names = {f.name.lower() for f in settings.effective_inputs}
    async with sessions() as session:
        existing = (await session.exec(select(SigningProfile.name).limit(1))).first()
        if existing is not None:
            ignored = ignored_input_keys(settings)
            if configured:
                return ["Signing:Profiles[] is ignored: the operational store already has "
                        "profiles (edit them through the API).", *ignored]
            return ignored
        if not configured and settings.environment != "Development":
            # Outside Development nothing signs with a generated certificate.
            return [NO_PROFILE_WARNING, *unbound_input_keys(settings, set())]
        if not configured:
            configured = [_dev_profile(settings)]
        warnings, taken, from_inputs = [], set(), folders_by_profile(settings)
        rows: dict[str, SigningProfile] = {}
        for config in configured:
            folder = config.input_folder or from_inputs.get(config.name.lower())
            if folder and (folder.lower() not in folder_names or folder.lower() in taken):
                reason = "not configured in Storage:Inputs[]" if folder.lower() not in \
                    folder_names else "already taken by another profile"
                warnings.append(f"Folder {folder!r} left unassigned: {reason} "
                                f"(profile {config.name}).")
                folder = None
            if folder:
                taken.add(folder.lower())
            data = config.model_dump(exclude={"policy", "input_folder"}, exclude_none=False)
            rows[config.name] = SigningProfile(
                **data, input_folder=folder,
                policy=config.policy.model_dump() if config.policy else None,
                is_dev=config.name == settings.signing.default_profile
                and not settings.signing.profiles)
            session.add(rows[config.name])
        # After every explicit choice: a folder naming no profile gets the default, if it has none.
        default = rows.get(settings.signing.default_profile)
        if default is not None and default.input_folder is None and \
                (folder := default_folder(settings, taken)) is not None:
            default.input_folder = folder
            taken.add(folder.lower())
        await session.commit()
    return warnings + unbound_input_keys(settings, taken)


def _dev_profile(settings: Settings) -> ProfileConfig:
    """A `default` profile signing with a generated dev certificate (implicit `inbox`)."""
    bundle = ensure_dev_pki(settings.data_dir.resolve() / DEV_PKI_DIR)
    return ProfileConfig(
        name=settings.signing.default_profile, pfx_path=str(bundle["pfx"]),
        pfx_password_file=str(bundle["password"]), trust_roots=[str(bundle["ca"])],
        # With Storage:Inputs[] configured, the seed rule binds it like any default profile.
        input_folder=None if settings.storage.inputs else "inbox",
    )


def ensure_dev_pki(directory: Path) -> dict[str, Path]:
    """Generate a dev CA and signer PFX once (marked NOT FOR PRODUCTION in their subjects)."""
    from activities.signer.crypto.certs import write_dev_bundle

    paths = {"ca": directory / "ca.pem", "pfx": directory / "signer.pfx",
             "password": directory / "signer.password"}
    if all(p.exists() for p in paths.values()):
        return paths
    directory.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(24)
    write_dev_bundle(directory, password)
    fd = os.open(paths["password"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(password)
    os.chmod(directory / "signer.key", 0o600)
    log.warning("Generated a development CA and signing certificate under %s "
                "(NOT FOR PRODUCTION)", directory)
    return paths


def is_keyless(profile: SigningProfile) -> bool:
    """KEYLESS: the profile's approvers sign (at the Lacuna Signer); it holds no key."""
    return profile.signers == ProfileSigners.APPROVERS or profile.cert_source == "none"


def certificate_spec(profile: SigningProfile) -> CertificateSpec:
    """How the engine opens this profile's key; a changed profile gets a new cache key."""
    return CertificateSpec(
        cache_key=f"{profile.name}:{profile.version}:{profile.updated_at.isoformat()}",
        source=profile.cert_source, secret=profile_secret(profile), pfx_path=profile.pfx_path,
        pkcs11_module=profile.pkcs11_module, pkcs11_token_label=profile.pkcs11_token_label,
        pkcs11_thumbprint=profile.pkcs11_thumbprint,
        allowed_pkcs11_modules=allowed_pkcs11_modules(), key_directories=key_directories(),
        csc=csc_spec(profile.csc) if profile.cert_source == "csc" else None)


def profile_secret(profile: SigningProfile) -> str | None:
    """The PFX password or PKCS#11 PIN, from its environment variable or file only."""
    if profile.cert_source == "pkcs11":
        return os.environ.get(profile.pkcs11_pin_env or "") or None
    if profile.pfx_password_env:
        return os.environ.get(profile.pfx_password_env)
    if profile.pfx_password_file:
        allowed = key_directories()
        if allowed is not None and not inside_directories(profile.pfx_password_file, allowed):
            return None  # never read: the open then fails without a word about the file
        return Path(profile.pfx_password_file).read_text().strip()
    return None
