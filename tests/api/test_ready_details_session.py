"""`GET /api/ready/details` takes the API key or an operator's dashboard session."""

from __future__ import annotations

from tests.dashboard.conftest import sign_in


async def test_an_operator_session_reads_the_readiness_details(api):
    refused = await api.get("/api/ready/details")
    assert refused.status_code == 401 and refused.json()["code"] == "auth.missing-key"
    assert (await sign_in(api)).status_code == 303
    answer = await api.get("/api/ready/details")
    assert answer.status_code == 200
    checks = {c["name"]: c for c in answer.json()["checks"]}
    assert checks["temporal"]["detail"] and checks["operational-store"]["gating"] is True
    # A signed-out (or forged) cookie opens nothing.
    api.cookies.set("esteira_session", "forged")
    assert (await api.get("/api/ready/details")).status_code == 401


async def test_the_session_opens_reads_only(api):
    assert (await sign_in(api)).status_code == 303
    assert (await api.get("/api/jobs")).status_code == 401
    assert (await api.post("/api/ready/details")).status_code in (401, 405)


async def test_the_contract_names_both_credentials_for_the_session_reads(api):
    document = (await api.get("/api/openapi.json")).json()
    assert document["components"]["securitySchemes"]["OperatorSession"] == {
        "type": "apiKey", "in": "cookie", "name": "esteira_session"}
    for path in ("/api/ready/details", "/api/jobs/{job_id}/files",
                 "/api/jobs/{job_id}/files/{name}"):
        assert document["paths"][path]["get"]["security"] == [
            {"ApiKey": []}, {"OperatorSession": []}], path
    assert document["paths"]["/api/jobs"]["get"]["security"] == [{"ApiKey": []}]
