"""The whole REST contract: every operation of every domain declares what it answers on
success, every answer in JSON is a named camelCase model, and every refusal is a problem."""

from __future__ import annotations

JSON = "application/json"
PROBLEM = "application/problem+json"


async def test_every_operation_declares_its_success_answer(api):
    document = (await api.get("/api/openapi.json")).json()
    operations = [(f"{method.upper()} {path}", operation)
                  for path, item in document["paths"].items()
                  for method, operation in item.items()]
    assert len(operations) >= 90
    for name, operation in operations:
        successes = {code: r for code, r in operation["responses"].items()
                     if code.startswith("2")}
        assert successes, f"{name} declares no success answer"
        for code, answer in successes.items():
            content = answer.get("content")
            if code == "204" or (code == "202" and not content):
                continue
            assert content, f"{name} {code} declares no body"
            for media, body in content.items():
                schema = body.get("schema")
                assert schema, f"{name} {code} {media} has no schema"
                if media == JSON:
                    refs = [s["$ref"] for s in schema.get("anyOf", schema.get("oneOf", [schema]))
                            if "$ref" in s] or ([schema["items"]["$ref"]]
                                                if "$ref" in schema.get("items", {}) else [])
                    assert refs, f"{name} {code} answers an unnamed object: {schema}"
                    for ref in refs:
                        model = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
                        snake = [f for f in model.get("properties", {}) if "_" in f]
                        assert not snake, f"{name} answers snake_case fields {snake}"
        for code, answer in operation["responses"].items():
            if name.startswith("GET /api/ready") and code == "503":
                continue  # the seed's readiness verdict: the same body as its 200
            if code[0] in "45":
                assert PROBLEM in answer.get("content", {}), f"{name} {code} is no problem"
