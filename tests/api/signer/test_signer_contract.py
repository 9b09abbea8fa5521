"""The signer's REST contract: every operation declares the body it answers (no bare object),
in camelCase, and every list is a page."""

from __future__ import annotations

SIGNER_TAGS = {"signer", "signer-approvals"}
JSON = "application/json"


async def _signer_operations(api):
    document = (await api.get("/api/openapi.json")).json()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if SIGNER_TAGS & set(operation.get("tags", [])):
                yield document, f"{method.upper()} {path}", operation


async def test_every_signer_operation_declares_a_typed_answer(api):
    seen = 0
    async for document, name, operation in _signer_operations(api):
        seen += 1
        [success] = [r for code, r in operation["responses"].items() if code.startswith("2")]
        content = success["content"]
        if "image/png" in content:  # the approver's preview is an image, not JSON
            continue
        if "application/octet-stream" in content:  # a job's file, streamed as stored
            assert set(content) == {"application/octet-stream"}, name
            continue
        schema = content[JSON]["schema"]
        assert "$ref" in schema, f"{name} answers an untyped body: {schema}"
        model = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        assert model.get("properties"), f"{name} answers a model without fields"
        assert not any("_" in field for field in model["properties"]), \
            f"{name} answers snake_case fields: {sorted(model['properties'])}"
    assert seen >= 25


async def test_every_signer_list_is_a_page(api):
    lists = {"/api/jobs", "/api/events", "/api/folders", "/api/profiles"}
    async for document, name, operation in _signer_operations(api):
        method, path = name.split(" ", 1)
        if method != "GET" or path not in lists:
            continue
        lists.discard(path)
        ref = operation["responses"]["200"]["content"][JSON]["schema"]["$ref"]
        page = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert set(page["properties"]) == {"items", "nextCursor"}, name
        assert {p["name"] for p in operation["parameters"]} >= {"limit", "cursor"}, name
    assert lists == set()
