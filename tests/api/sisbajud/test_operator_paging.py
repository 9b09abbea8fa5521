"""Every SISBAJUD list pages with `?limit=&cursor=` into `{items, nextCursor}`; the operator
API's answers are typed, camelCase schemas in the OpenAPI document."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from activities.sisbajud.models import (
    SisbajudHumanDecision,
    SisbajudInstitution,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
)
from activities.sisbajud.store import record_notice
from shared.db.models import utcnow
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}
# Each list, the field that names an item, and how many the seed puts in it.
LISTS = [("/api/sisbajud/orders", "orderId", 5), ("/api/sisbajud/notices", "id", 5),
         ("/api/sisbajud/notices?state=PARKED", "id", 3), ("/api/sisbajud/alarms", "id", 3),
         ("/api/sisbajud/outbox", "id", 5), ("/api/sisbajud/orphans", "operationId", 5),
         ("/api/sisbajud/human-decisions", "id", 5),
         ("/api/sisbajud/human-decisions?open=true", "id", 3),
         ("/api/sisbajud/institutions", "institutionId", 4)]
DOCUMENTED = ("/api/sisbajud", "/v1/admin/ledger-routing")


async def _seed(sessions) -> None:
    now = utcnow()
    for index in range(5):  # parked ones raise an alarm each
        async with sessions() as session:
            await record_notice(session, webhook_id=f"hub-{index}", order_id=f"o-{index}",
                                revision=1, parked_reason="body is not JSON" if index % 2 == 0
                                else None, body=b"{}", skew_s=0, skewed=False, secret_index=0)
    async with sessions() as session:
        for index in range(5):
            # Two rows share each timestamp: the key's second column orders them.
            at = now - timedelta(minutes=index // 2)
            session.add(SisbajudOrder(order_id=f"o-{index}", revision=1, state="RESOLVED",
                                      updated_at=at))
            session.add(SisbajudOrphan(operation_id=f"op-{index}", transaction_id="tx",
                                       institution_id="BANK", block_alias="@block_sisbajud_ab",
                                       account_id="acc", found_at=at))
            session.add(SisbajudOutbox(idempotency_key=f"o-{index}:1:1", order_id=f"o-{index}",
                                       revision=1, payload={}, state="PENDING"))
            session.add(SisbajudHumanDecision(order_id=f"o-{index}", revision=1,
                                              reason="institution.unconfigured",
                                              resolved_at=now if index < 2 else None))
        for institution in ("A-BANK", "Z-BANK", "M-BANK"):
            session.add(SisbajudInstitution(institution_id=institution, owner_subject="x"))
        await session.commit()


async def _walk(api, path: str, key: str, limit: int) -> tuple[list[Any], int]:
    """Every item's `key` following `nextCursor` from the first page, and the page count."""
    seen, cursor, pages = [], None, 0
    joiner = "&" if "?" in path else "?"
    while True:
        query = f"{path}{joiner}limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        response = await api.get(query, headers=AUTH)
        assert response.status_code == 200, (query, response.text)
        page = response.json()
        seen += [item[key] for item in page["items"]]
        pages += 1
        cursor = page["nextCursor"]
        if cursor is None:
            return seen, pages


async def test_each_list_is_walked_once_in_order_page_by_page(api):
    await _seed(api.context.sessions)
    for path, key, count in LISTS:
        whole, pages = await _walk(api, path, key, 500)
        assert (len(whole), pages) == (count, 1), path
        paged, pages = await _walk(api, path, key, 2)
        assert paged == whole, path
        assert pages == (count + 1) // 2, path


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_the_lists_keep_their_order_and_the_outbox_its_totals(api):
    await _seed(api.context.sessions)
    orders, _ = await _walk(api, "/api/sisbajud/orders", "orderId", 2)
    assert orders == ["o-1", "o-0", "o-3", "o-2", "o-4"]  # newest first, then by id, desc
    institutions = (await api.get("/api/sisbajud/institutions?limit=2", headers=AUTH)).json()
    assert [i["institutionId"] for i in institutions["items"]] == ["A-BANK", "M-BANK"]
    assert institutions["m2mSubject"] == api.context.settings.sisbajud.m2m_subject
    outbox = (await api.get("/api/sisbajud/outbox?limit=1", headers=AUTH)).json()
    assert (outbox["depth"], outbox["counts"], len(outbox["items"])) == (5, {"PENDING": 5}, 1)
    assert outbox["nextCursor"]


@pytest.mark.parametrize("backend", ["sqlite"])
# Not base64 JSON; an empty key; a key of the wrong kinds for every list.
@pytest.mark.parametrize("cursor", ["not-a-cursor", "W10=", "W3RydWUsICJ4Il0="])
async def test_a_cursor_that_is_not_ours_is_422_on_every_list(api, cursor):
    for path, _, _ in LISTS:
        joiner = "&" if "?" in path else "?"
        response = await api.get(f"{path}{joiner}cursor={cursor}", headers=AUTH)
        assert (response.status_code, response.json()["code"]) == (422, "request.invalid"), (
            path, cursor, response.text)


def _schemas(document: dict, schema: dict) -> list[dict]:
    """`schema` and every component schema it names, nested ones included."""
    found, todo = [], [schema]
    while todo:
        current = todo.pop()
        if "$ref" in current:
            current = document["components"]["schemas"][current["$ref"].rsplit("/", 1)[1]]
        found.append(current)
        todo += current.get("oneOf", []) + current.get("anyOf", [])
        for prop in current.get("properties", {}).values():
            todo += [prop, prop.get("items", {}), *prop.get("anyOf", [])]
    return found


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_every_operator_answer_is_a_typed_camel_case_schema(api):
    document = (await api.get("/api/openapi.json")).json()
    operations = [(path, method, operation) for path, item in document["paths"].items()
                  if path.startswith(DOCUMENTED) for method, operation in item.items()]
    assert len(operations) >= 17  # the prefixes caught the whole surface
    for path, method, operation in operations:
        answers = {code: body for code, body in operation["responses"].items()
                   if code.startswith("2")}
        assert answers, (method, path)
        for code, body in answers.items():
            schema = body["content"]["application/json"]["schema"]
            named = [s for s in _schemas(document, schema) if s.get("type") == "object"
                     and "properties" in s]
            assert named, (method, path, code, schema)  # not a bare `dict`
            for each in named:
                assert not [p for p in each["properties"] if "_" in p], (path, each)
