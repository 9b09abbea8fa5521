"""The pickup API's contract: typed camelCase answers and bodies, every list a cursor page."""

from __future__ import annotations

from typing import Any

from activities.pickup.models import AuditEntry, LedgerEntry, Notification

P = "/api/pickup"
# Bodies that are not ours: the Control iD Monitor push is read in its own shape.
EXTERNAL = ("/api/pickup/turnstile/monitor/",)
# Answers that are no JSON document: the live streams, and the report's CSV download.
NOT_JSON = ("text/event-stream", "text/csv")


def _resolve(document: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _names(document: dict, schema: dict, seen: set[str]) -> set[str]:
    """Every property name under `schema`, following references once."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        if name in seen:
            return set()
        seen.add(name)
    schema = _resolve(document, schema)
    names = set(schema.get("properties", {}))
    children = [*schema.get("properties", {}).values(), schema.get("items", {}),
                *schema.get("anyOf", []), *schema.get("allOf", []),
                schema.get("additionalProperties") or {}]
    for child in children:
        if isinstance(child, dict) and child:
            names |= _names(document, child, seen)
    return names


def _operations(document: dict) -> list[tuple[str, str, dict]]:
    return [(path, method, operation) for path, item in document["paths"].items()
            if path.startswith(P) and not path.startswith(EXTERNAL)
            for method, operation in item.items()]


def _json(content: dict) -> dict[str, Any] | None:
    return content.get("application/json", {}).get("schema")


async def test_every_answer_and_body_is_a_typed_camel_case_model(pickup_api):
    document = await pickup_api.ok("GET", "/api/openapi.json")
    checked = 0
    for path, method, operation in _operations(document):
        for status, response in operation["responses"].items():
            if not status.startswith("2") or status == "204":
                continue
            content = response.get("content", {})
            if "application/json" not in content and any(kind in content for kind in NOT_JSON):
                continue
            schema = _json(content)
            assert schema, f"{method} {path} {status} declares no answer"
            resolved = _resolve(document, schema)
            target = resolved.get("items", resolved) if resolved.get("type") == "array" \
                else resolved
            assert "$ref" in (schema.get("items", schema)) and _resolve(
                document, target).get("properties"), f"{method} {path} answers an untyped body"
            snake = {n for n in _names(document, schema, set()) if "_" in n}
            assert not snake, f"{method} {path} answers snake_case {snake}"
            checked += 1
        body = _json(operation.get("requestBody", {}).get("content", {}))
        if body is not None:
            snake = {n for n in _names(document, body, set()) if "_" in n}
            assert not snake, f"{method} {path} reads snake_case {snake}"
    assert checked >= 40


async def test_every_list_is_a_cursor_page(pickup_api):
    document = await pickup_api.ok("GET", "/api/openapi.json")
    pages = set()
    for path, method, operation in _operations(document):
        schema = _json(operation["responses"].get("200", {}).get("content", {}))
        if method != "get" or schema is None:
            continue
        resolved = _resolve(document, schema)
        assert resolved.get("type") != "array", f"GET {path} answers a bare list"
        if "items" in resolved.get("properties", {}):
            assert "nextCursor" in resolved["properties"], path
            assert {"limit", "cursor"} <= {p["name"] for p in operation["parameters"]}, path
            pages.add(path)
    assert pages == {f"{P}/{p}" for p in (
        "students", "guardians", "links", "authorized-persons", "audit", "ledger",
        "notifications", "guardians/{guardian_id}/tokens", "guardian/students")}


async def _walk(api, path: str, **params) -> list[list[int]]:
    """Ids of each page of `path`, following `nextCursor` to the end."""
    pages, cursor = [], None
    while True:
        page = await api.ok("GET", path, params={**params, **({"cursor": cursor} if cursor
                                                               else {})})
        pages.append([row["id"] for row in page["items"]])
        cursor = page["nextCursor"]
        if cursor is None:
            return pages


async def test_the_audit_the_ledger_and_the_outbox_are_paged_with_their_totals(pickup_api):
    api = pickup_api
    school = await api.seed.school()
    student = await api.seed.student(school)
    await api.seed.add(*[AuditEntry(school_id=school.id, entity="student",
                                    entity_id=student.id, action=f"a{n}", actor="test")
                         for n in range(5)])
    await api.seed.add(*[LedgerEntry(controller=school.id, command="grant",
                                     subject_kind="student", subject_id=student.id,
                                     registration=f"r{n}", idempotency_key=f"k{n}",
                                     status="failed" if n == 0 else "pending")
                         for n in range(5)])
    await api.seed.add(*[Notification(guardian_id=1, student_id=student.id, kind="picked-up",
                                      message="m", idempotency_key=f"n{n}") for n in range(3)])

    audit = await _walk(api, f"{P}/audit", entity="student", entity_id=student.id, limit=2)
    assert [len(page) for page in audit] == [2, 2, 1]
    ids = [i for page in audit for i in page]
    assert ids == sorted(ids, reverse=True)  # newest first, no row twice

    ledger = await _walk(api, f"{P}/ledger", limit=2)
    assert [i for page in ledger for i in page] == [1, 2, 3, 4, 5]  # oldest first
    last = await api.ok("GET", f"{P}/ledger", params={"limit": 2, "cursor": (await api.ok(
        "GET", f"{P}/ledger", params={"limit": 4}))["nextCursor"]})
    # The totals are the whole ledger's, on every page.
    assert (len(last["items"]), last["pending"], last["failed"]) == (1, 4, 1)
    assert last["items"][0]["ageSeconds"] >= 0

    outbox = await _walk(api, f"{P}/notifications", limit=2)
    assert [len(page) for page in outbox] == [2, 1]
    bad = await api.http.get(f"{P}/ledger", params={"cursor": "not-a-cursor"})
    assert (bad.status_code, bad.json()["code"]) == (422, "request.invalid")


async def test_a_guardians_tokens_and_students_are_paged(pickup_api):
    api = pickup_api
    school = await api.seed.school()
    students = [await api.seed.student(school, name) for name in ("Ana", "Bia", "Caio")]
    guardian = await api.seed.guardian()
    for student in students:
        await api.seed.link(student, guardian)
    tokens = [(await api.ok("POST", f"{P}/guardians/{guardian.id}/tokens", json={}))
              for _ in range(3)]
    assert await _walk(api, f"{P}/guardians/{guardian.id}/tokens", limit=2) == [
        [tokens[0]["id"], tokens[1]["id"]], [tokens[2]["id"]]]
    bearer = {"Authorization": f"Bearer {tokens[0]['token']}", "X-API-Key": ""}
    first = await api.ok("GET", f"{P}/guardian/students", params={"limit": 2}, headers=bearer)
    rest = await api.ok("GET", f"{P}/guardian/students", headers=bearer,
                        params={"limit": 2, "cursor": first["nextCursor"]})
    assert [s["name"] for s in first["items"] + rest["items"]] == ["Ana", "Bia", "Caio"]
    assert rest["nextCursor"] is None


async def test_a_body_in_snake_case_is_still_read(pickup_api):
    api = pickup_api
    school = await api.ok("POST", f"{P}/schools", json={"name": "Escola",
                                                        "arrival_timeout_minutes": 7})
    assert school["arrivalTimeoutMinutes"] == 7
    student = await api.ok("POST", f"{P}/students", json={"school_id": school["id"],
                                                          "name": "Ana"})
    assert (student["schoolId"], student["stateReason"]) == (school["id"], None)
    unknown = await api.http.post(f"{P}/students", json={"schoolId": school["id"],
                                                         "name": "Bia", "nickname": "B"})
    assert (unknown.status_code, unknown.json()["code"]) == (422, "request.invalid")
