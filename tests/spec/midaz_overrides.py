"""Where Midaz's OpenAPI document and its Go code disagree: what the code does, and where
(LerianStudio/midaz at the commit in tests/spec/midaz/README.md)."""

from __future__ import annotations

from typing import Any

from tests.support.openapi_check import Overrides

UUID = {"type": "string", "format": "uuid"}
NULLABLE_UUID = {"type": ["string", "null"], "format": "uuid"}
# decimal.Decimal decodes a JSON string or number.
DECIMAL = {"type": ["string", "number"]}
METADATA = {"type": ["object", "null"]}


def _closed(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    # DecodeAndValidate refuses unknown fields (pkg.ValidationUnknownFieldsError, code 0053).
    return {"type": "object", "additionalProperties": False, "properties": properties,
            "required": list(required)}


# pkg/mmodel/account.go `CreateAccountInput`.
CREATE_ACCOUNT = _closed({
    "name": {"type": "string", "maxLength": 256},
    "parentAccountId": NULLABLE_UUID, "entityId": {"type": ["string", "null"], "maxLength": 256},
    "holderId": NULLABLE_UUID, "assetCode": {"type": "string", "maxLength": 100},
    "portfolioId": NULLABLE_UUID, "segmentId": NULLABLE_UUID,
    "status": _closed({"code": {"type": "string", "maxLength": 100},
                       "description": {"type": ["string", "null"], "maxLength": 256}}),
    "alias": {"type": ["string", "null"], "maxLength": 100},
    "type": {"type": "string", "maxLength": 256}, "blocked": {"type": ["boolean", "null"]},
    "metadata": METADATA}, ("assetCode", "type"))

# pkg/mtransaction/transaction.go `Amount`, `FromTo`, `Source`, `Distribute`, `Send`.
AMOUNT = _closed({"asset": {"type": "string"}, "value": DECIMAL}, ("asset", "value"))
FROM_TO = _closed({
    "accountAlias": {"type": "string"}, "balanceKey": {"type": "string"}, "amount": AMOUNT,
    "share": _closed({"percentage": {"type": "integer"},
                      "percentageOfPercentage": {"type": "integer"}}, ("percentage",)),
    "remaining": {"type": "string"},
    "rate": _closed({"from": {"type": "string"}, "to": {"type": "string"}, "value": DECIMAL,
                     "externalId": UUID}, ("from", "to", "value", "externalId")),
    "description": {"type": "string"}, "chartOfAccounts": {"type": "string"},
    "metadata": METADATA, "isFrom": {"type": "boolean"},
    "route": {"type": "string", "maxLength": 250}, "routeId": NULLABLE_UUID})
SEND = _closed({
    "asset": {"type": "string"}, "value": DECIMAL,
    "source": _closed({"remaining": {"type": "string"},
                       "from": {"type": "array", "items": FROM_TO, "minItems": 1}}, ("from",)),
    "distribute": _closed({"remaining": {"type": "string"},
                           "to": {"type": "array", "items": FROM_TO, "minItems": 1}}, ("to",))},
    ("asset", "value", "source", "distribute"))
# pkg/mtransaction/input.go `CreateTransactionInput` (the block, unblock and JSON creates
# decode it: components/ledger/internal/adapters/http/in/transaction_handler_huma.go).
CREATE_TRANSACTION = _closed({
    "chartOfAccountsGroupName": {"type": "string", "maxLength": 256},
    "description": {"type": "string", "maxLength": 256},
    "code": {"type": "string", "maxLength": 100}, "pending": {"type": "boolean"},
    "metadata": METADATA, "route": {"type": "string", "maxLength": 250},
    "routeId": NULLABLE_UUID, "transactionDate": {"type": "string"}, "send": SEND,
    "skip": {"type": "object"}}, ("send",))

OVERRIDES = Overrides(
    # account_handler_huma.go: `CreateAccountOutputHuma{Status: http.StatusCreated, …}`;
    # transaction_handler_huma.go: `createTransactionShell` answers `Status: http.StatusCreated`.
    created=frozenset({"createAccount", "createTransactionBlock", "createTransactionUnblock",
                       "createTransactionJSON", "createTransactionInflow",
                       "createTransactionOutflow"}),
    request_bodies={"createAccount": CREATE_ACCOUNT,
                    "createTransactionBlock": CREATE_TRANSACTION,
                    "createTransactionUnblock": CREATE_TRANSACTION,
                    "createTransactionJSON": CREATE_TRANSACTION},
    # pkg/net/http/problem.go `Detail`: problem.Detail plus `entityType` and `message`
    # (both omitempty), which the document's closed `Error` leaves out.
    extra_properties={"Error": {"entityType": {"type": "string"},
                                "message": {"type": "string"}}},
    # pkg/mmodel/operation.go: `Metadata map[string]any json:"metadata,omitempty"`, absent
    # when an operation has none, though the document lists it as required.
    optional={"Operation": ("metadata",)},
    # lib-auth v2 (auth/middleware/middleware.go, `Authorize`, which every route's chain runs
    # first): `c.Status(401).SendString("Missing Token")` without a bearer, and
    # `SendString(http.StatusText(401))` for a bearer that does not parse as a JWT.
    auth_layer_401=frozenset({"Missing Token", "Unauthorized"}),
)
