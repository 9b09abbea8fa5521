"""Request bodies Midaz accepts, decoded with Midaz's error codes."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from services.simulators.midaz.errors import MidazError

M = TypeVar("M", bound=BaseModel)

ALIAS_PATTERN = r"^[a-zA-Z0-9@:_-]+$"


class _Body(BaseModel):
    # Midaz rejects unknown JSON keys (0053) before anything else.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class StatusIn(_Body):
    code: str = "ACTIVE"
    description: str | None = None


class CreateOrganization(_Body):
    legalName: str = Field(max_length=256)
    legalDocument: str = Field(max_length=256)
    doingBusinessAs: str | None = None
    parentOrganizationId: str | None = None
    address: dict[str, Any] | None = None
    status: StatusIn | None = None
    metadata: dict[str, Any] | None = None


class CreateLedger(_Body):
    name: str = Field(max_length=256)
    status: StatusIn | None = None
    metadata: dict[str, Any] | None = None


class CreateAsset(_Body):
    name: str
    type: str
    code: str
    status: StatusIn | None = None
    metadata: dict[str, Any] | None = None


class CreateAccountType(_Body):
    name: str
    keyValue: str = Field(pattern=r"^[a-zA-Z0-9_-]+$", max_length=50)
    description: str | None = None
    metadata: dict[str, Any] | None = None


class CreateAccount(_Body):
    assetCode: str = Field(max_length=100)
    type: str = Field(max_length=256)
    alias: str | None = Field(None, max_length=100, pattern=ALIAS_PATTERN)
    name: str | None = Field(None, max_length=256)
    parentAccountId: str | None = None
    entityId: str | None = None
    holderId: str | None = None
    portfolioId: str | None = None
    segmentId: str | None = None
    status: StatusIn | None = None
    blocked: bool = False
    metadata: dict[str, Any] | None = None


class UpdateBalance(_Body):
    allowSending: bool | None = None
    allowReceiving: bool | None = None
    settings: dict[str, Any] | None = None


class AmountIn(_Body):
    asset: str
    value: Decimal


class ShareIn(_Body):
    percentage: Decimal
    percentageOfPercentage: Decimal | None = None


class LegIn(_Body):
    accountAlias: str
    balanceKey: str = "default"
    amount: AmountIn | None = None
    share: ShareIn | None = None
    remaining: str | None = None
    rate: dict[str, Any] | None = None
    description: str | None = None
    chartOfAccounts: str | None = None
    metadata: dict[str, Any] | None = None
    routeId: str | None = None
    route: str | None = None


class SourceIn(_Body):
    from_: list[LegIn] = Field(alias="from", min_length=1)
    remaining: str | None = None


class DistributeIn(_Body):
    to: list[LegIn] = Field(min_length=1)
    remaining: str | None = None


class SendIn(_Body):
    asset: str
    value: Decimal
    source: SourceIn | None = None
    distribute: DistributeIn | None = None


class CreateTransaction(_Body):
    description: str | None = Field(None, max_length=256)
    code: str | None = Field(None, max_length=100)
    chartOfAccountsGroupName: str | None = Field(None, max_length=256)
    routeId: str | None = None
    route: str | None = None
    pending: bool = False
    transactionDate: datetime | None = None
    metadata: dict[str, Any] | None = None
    send: SendIn


def check_metadata(metadata: dict[str, Any] | None) -> None:
    """Flat map, keys <= 100 chars, values <= 2000 chars (0067 / 0050 / 0051)."""
    for key, value in (metadata or {}).items():
        if isinstance(value, dict | list):
            raise MidazError("0067", key)
        if len(key) > 100:
            raise MidazError("0050", key)
        if isinstance(value, str) and len(value) > 2000:
            raise MidazError("0051", key)


def decode(model: type[M], raw: bytes, entity_type: str) -> M:
    """Parse a JSON body into `model`, mapping failures to Midaz codes."""
    try:
        payload = json.loads(raw or b"null")
    except json.JSONDecodeError as exc:
        raise MidazError("0094", f"invalid JSON: {exc.msg}") from exc
    if not isinstance(payload, dict):
        raise MidazError("0094", "the body must be a JSON object")
    try:
        parsed = model.model_validate(payload)
    except ValidationError as exc:
        raise _map_validation(exc, entity_type) from exc
    check_metadata(payload.get("metadata"))
    return parsed


def _map_validation(exc: ValidationError, entity_type: str) -> MidazError:
    # Unknown fields win over missing-required, which wins over other invalid values.
    by_type: dict[str, dict[str, Any]] = {"unknown": {}, "missing": {}, "invalid": {}}
    for error in exc.errors():
        path = ".".join(str(p) for p in error["loc"])
        if error["type"] == "extra_forbidden":
            by_type["unknown"][path] = error.get("input")
        elif error["type"] == "missing":
            by_type["missing"][path] = f"{path} is a required field"
        else:
            by_type["invalid"][path] = error["msg"]
    if by_type["unknown"]:
        return MidazError("0053", fields=by_type["unknown"], entity_type=entity_type)
    if by_type["missing"]:
        return MidazError("0009", fields=by_type["missing"], entity_type=entity_type)
    return MidazError("0047", fields=by_type["invalid"], entity_type=entity_type)
