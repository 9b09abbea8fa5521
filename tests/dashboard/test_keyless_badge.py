"""The profiles page marks a KEYLESS profile (its approvers sign) and never DEGRADED."""

from __future__ import annotations

from tests.support.lacuna import keyless_profile


async def test_a_keyless_profile_is_marked_keyless_not_degraded(operator):
    async with operator.context.sessions() as session:
        session.add(keyless_profile("aprovadores", quorum=2, trust_roots=[]))
        await session.commit()
    page = (await operator.get("/profiles")).text
    row = page[page.index(">aprovadores<"):].split("</tr>", 1)[0]
    assert "KEYLESS" in row and "approvers sign; no key is opened" in row
    assert "DEGRADED" not in row
