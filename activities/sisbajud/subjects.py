"""A subject's active accounts, from the CRM through the ledger to their balances."""

from __future__ import annotations

import asyncio
from typing import Any

from activities.sisbajud.clients import MidazClient
from activities.sisbajud.rules import SubjectAccount, is_active, own_funds


async def active_accounts(midaz: MidazClient, document: str) -> list[SubjectAccount]:
    """Every active account of `document` in the institution's ledger, in CRM order."""
    inst = midaz.institution
    instruments = [i for i in await midaz.instruments(document)
                   if i.get("accountId") and i.get("ledgerId", inst.ledger_id) == inst.ledger_id]
    accounts = await asyncio.gather(*(midaz.account(i["accountId"]) for i in instruments))
    active = [(i, a) for i, a in zip(instruments, accounts, strict=True)
              if a is not None and is_active(a, i, inst.asset_code)]
    balances = await midaz.balances([a["alias"] for _, a in active])
    return [_subject_account(i, a, b, inst.salary_account_types)
            for (i, a), b in zip(active, balances, strict=True)]


def _subject_account(instrument: dict[str, Any], account: dict[str, Any],
                     balance: dict[str, Any] | None, salary_types: list[str]) -> SubjectAccount:
    details = instrument.get("bankingDetails") or {}
    return SubjectAccount(
        account_id=account["id"], alias=account["alias"], own_funds=own_funds(balance),
        salary=details.get("type") in salary_types, branch=details.get("branch"),
        number=details.get("account"),
    )
