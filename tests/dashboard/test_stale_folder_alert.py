"""A profile bound to a folder this host doesn't configure: an alert on /profiles and its page."""

from __future__ import annotations

from markupsafe import escape

from activities.signer.models.jobs import SigningProfile

STALE = ("profile antigo is bound to folder 'remessas', which this host does not configure "
         "(Storage:Inputs[]): nothing is watched for it here and it still serves uploads; "
         "choose another folder on /profiles/antigo")
ALERT = f'<p class="notice error" role="alert">{escape(STALE)}</p>'


async def test_a_stale_folder_binding_is_an_alert_with_its_reason_on_both_pages(operator):
    async with operator.context.sessions() as session:
        # Bound on an earlier boot; `remessas` was then removed from the configuration.
        session.add(SigningProfile(name="antigo", pfx_path="/x.pfx", input_folder="remessas"))
        await session.commit()
    listing = await operator.get("/profiles")
    assert listing.status_code == 200
    row = listing.text[listing.text.index(">antigo<"):].split("</tr>", 1)[0]
    assert ALERT in row and "DEGRADED" in row
    bound = listing.text[listing.text.index(">default<"):].split("</tr>", 1)[0]
    assert "inbox" in bound and "does not configure" not in bound, "inbox is configured here"
    own = await operator.get("/profiles/antigo")
    assert own.status_code == 200 and ALERT in own.text
    fine = await operator.get("/profiles/default")
    assert fine.status_code == 200 and "does not configure" not in fine.text
