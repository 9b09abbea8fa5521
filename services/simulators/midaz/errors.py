"""Midaz error catalogue (real codes and titles) and its two JSON envelopes."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

# code -> (HTTP status, title, message). Codes, titles and statuses follow
# `pkg/constant/errors.go` and `pkg/errors.go` in LerianStudio/midaz.
CATALOGUE: dict[str, tuple[int, str, str]] = {
    "0003": (
        409,
        "Asset Name or Code Duplicate",
        "An asset with the same name or code already exists in your ledger.",
    ),
    "0004": (400, "Code Uppercase Requirement", "The code must be in uppercase."),
    "0007": (404, "Entity Not Found", "No entity was found for the given ID."),
    "0009": (
        400,
        "Missing Fields in Request",
        "Your request is missing one or more required fields.",
    ),
    "0018": (
        422,
        "Insufficient Funds Error",
        "The transaction could not be completed due to "
        "insufficient funds in the account. Please add sufficient funds to your account "
        "and try again.",
    ),
    "0019": (
        422,
        "Account Ineligibility Error",
        "One or more accounts listed in the transaction "
        "are not eligible to participate. Please review the account statuses and try "
        "again.",
    ),
    "0020": (
        409,
        "Alias Unavailability Error",
        "The alias {0} is already in use. Please choose a different alias and try again.",
    ),
    "0024": (
        422,
        "Account Status Transaction Restriction",
        "The current statuses of the source "
        "and/or destination accounts do not permit transactions.",
    ),
    "0034": (404, "Asset Code Not Found", "The provided asset code does not exist in our records."),
    "0037": (404, "Ledger ID Not Found", "The provided ledger ID does not exist in our records."),
    "0038": (
        404,
        "Organization ID Not Found",
        "The provided organization ID does not exist in our records.",
    ),
    "0041": (
        401,
        "Token Missing",
        "A valid token must be provided in the request header. "
        "Please include a token and try again.",
    ),
    "0042": (
        401,
        "Invalid Token",
        "The provided token is expired, invalid or malformed. Please "
        "provide a valid token and try again.",
    ),
    "0046": (500, "Internal Server Error", "The server encountered an unexpected error."),
    "0047": (
        400,
        "Bad Request",
        "The server could not understand the request due to malformed "
        "syntax. Please check the listed fields and try again.",
    ),
    "0050": (
        400,
        "Metadata Key Length Exceeded",
        "The metadata key {0} exceeds the maximum allowed length of 100 characters.",
    ),
    "0051": (
        400,
        "Metadata Value Length Exceeded",
        "The metadata value {0} exceeds the maximum allowed length of 2000 characters.",
    ),
    "0052": (404, "Account ID Not Found", "The provided account ID does not exist in our records."),
    "0053": (
        400,
        "Unexpected Fields in the Request",
        "The request body contains more fields than expected.",
    ),
    "0065": (
        400,
        "Invalid Path Parameter",
        "One or more path parameters are in an incorrect format: {0}.",
    ),
    "0066": (400, "Invalid Account Type", "The provided 'type' is not valid."),
    "0067": (
        400,
        "Invalid Metadata Nesting",
        "The metadata object cannot contain nested values ({0}).",
    ),
    "0068": (
        404,
        "Operation ID Not Found",
        "The provided operation ID does not exist in our records.",
    ),
    "0072": (
        400,
        "Invalid Transaction Type",
        "Only one transaction type ('amount', 'share', or "
        "'remaining') must be specified in the '{0}' field for each entry.",
    ),
    "0073": (
        422,
        "Transaction Value Mismatch",
        "The values for the source, the destination, or "
        "both do not match the specified transaction amount.",
    ),
    "0077": (400, "Invalid Date Format Error", "Dates must use the 'yyyy-mm-dd' format."),
    "0080": (
        400,
        "Pagination Limit Exceeded",
        "The pagination limit exceeds the maximum allowed of {0} items per page.",
    ),
    "0081": (400, "Invalid Sort Order", "The 'sort_order' field must be 'asc' or 'desc'."),
    "0082": (
        400,
        "Invalid Query Parameter",
        "One or more query parameters are in an incorrect format: '{0}'.",
    ),
    "0083": (400, "Invalid Date Range Error", "Both 'start_date' and 'end_date' are required."),
    "0084": (
        409,
        "Duplicate Idempotency Key",
        "The idempotency key {0} is already in use. Please provide a unique key and try again.",
    ),
    "0085": (
        404,
        "Account Alias Not Found",
        "The provided account Alias does not exist in our records.",
    ),
    "0090": (
        422,
        "Transaction ambiguous account",
        "Transaction can't use the same account in sources and destinations",
    ),
    "0094": (400, "Unmarshalling error", "{0}"),
    "0095": (
        500,
        "Message Broker Unavailable",
        "The server encountered an unexpected error while connecting to Message Broker.",
    ),
    "0101": (
        404,
        "Operation Route Not Found",
        "The provided operation route does not exist in our records.",
    ),
    "0105": (
        404,
        "Transaction Route Not Found",
        "The provided transaction route does not exist in our records.",
    ),
    "0108": (
        409,
        "Duplicate Account Type Key Value",
        "An account type with this keyValue already exists.",
    ),
    "0113": (422, "Corrupted Account Rule", "The operation route account rule is corrupted."),
    "0114": (422, "Transaction Route Not Informed", "The transaction route is not informed."),
    "0116": (
        422,
        "Accounting Route Count Mismatch",
        "The operation routes count does not match the transaction route.",
    ),
    "0117": (
        422,
        "Accounting Route Not Found",
        "The operation route ID was not found in the transaction route.",
    ),
    "0118": (
        422,
        "Accounting Alias Validation Failed",
        "The operation alias does not match the accounting route rule.",
    ),
    "0119": (
        422,
        "Accounting Account Type Validation Failed",
        "The account type does not match the accounting route rule.",
    ),
    "0121": (
        400,
        "Invalid Future Transaction Date",
        "The transactionDate cannot be in the future.",
    ),
    "0125": (
        422,
        "Invalid Transaction Value",
        "Negative or zero transaction values are not "
        "allowed. The 'send.value' must be greater than zero.",
    ),
    "0151": (422, "Missing Counterpart", "The bidirectional route lacks a counterpart."),
    "0152": (422, "Direction Route Mismatch", "The leg direction is incompatible with the route."),
    "0157": (422, "No Routes for Action", "The route has no entries for this action."),
    "0167": (422, "Overdraft Limit Exceeded", "The transaction would exceed the overdraft limit."),
    "0168": (
        422,
        "Direct Operation On Internal Balance",
        "Internal balances cannot be used directly.",
    ),
    "0172": (400, "Invalid Balance Settings", "The balance settings are invalid."),
    "0174": (422, "Stale Balance Version", "The balance changed; re-read it and retry."),
}


class MidazError(Exception):
    """A Midaz business error: a catalogue code rendered in the configured envelope."""

    def __init__(
        self,
        code: str,
        *args: Any,
        fields: dict[str, Any] | None = None,
        entity_type: str | None = None,
        status: int | None = None,
    ) -> None:
        default_status, title, template = CATALOGUE.get(code, (status or 500, "Error", "{0}"))
        super().__init__(f"{code} {title}")
        self.code = code
        self.status = status or default_status
        self.title = title
        self.message = template.format(*args) if args else template.replace(" {0}", "")
        self.fields = fields
        self.entity_type = entity_type
        self.headers: dict[str, str] = {}


def render(err: MidazError, style: str) -> JSONResponse:
    """The response for `err`: v3.8 flat JSON or v4 RFC 9457 problem+json."""
    if style == "v4":
        server_side = err.status >= 500
        body: dict[str, Any] = {
            # The real BaseURI is unverified (research §6); the code is the stable part.
            "type": f"https://docs.lerian.studio/errors/{err.code}",
            "title": HTTPStatus(err.status).phrase if server_side else err.title,
            "status": err.status,
            "detail": "internal error" if server_side else err.message,
            "code": err.code,
        }
        if err.entity_type:
            body["entityType"] = err.entity_type
        if err.fields:
            body["errors"] = [{"location": k, "message": str(v)} for k, v in err.fields.items()]
        return JSONResponse(
            body, status_code=err.status, headers=err.headers, media_type="application/problem+json"
        )
    body = {"code": err.code, "title": err.title, "message": err.message}
    if err.entity_type:
        body["entityType"] = err.entity_type
    if err.fields:
        body["fields"] = err.fields
    return JSONResponse(body, status_code=err.status, headers=err.headers)


def install_handlers(app: FastAPI) -> None:
    """Render every `MidazError` in the style currently set on the simulator."""

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, MidazError)
        return render(exc, request.app.state.sim.config.error_style)

    app.add_exception_handler(MidazError, handle)
