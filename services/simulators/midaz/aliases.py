"""The accounts of each ledger by alias: exact, and by case-insensitive prefix or suffix."""

from __future__ import annotations

from bisect import bisect_left, insort
from itertools import islice

from services.simulators.midaz.model import Account

# (lower-case alias, or its reverse; creation order; the account)
Entry = tuple[str, int, Account]


class AliasIndex:
    """What Midaz's alias indexes answer, without a scan of every account."""

    def __init__(self) -> None:
        self._exact: dict[tuple[str, str], Account] = {}
        # Per ledger, entries kept sorted: every alias with a given prefix is one contiguous run
        # (and, in the reversed list, every alias with a given suffix).
        self._forward: dict[str, list[Entry]] = {}
        self._reversed: dict[str, list[Entry]] = {}
        self._created = 0

    def clear(self) -> None:
        """Forget every account."""
        self._exact.clear()
        self._forward.clear()
        self._reversed.clear()
        self._created = 0

    def add(self, account: Account) -> None:
        """Index a new account (aliases never change)."""
        self._exact[account.ledger_id, account.alias] = account
        self._created += 1
        lowered = account.alias.lower()
        # The creation number is unique, so tuples never get as far as comparing accounts.
        for table, key in ((self._forward, lowered), (self._reversed, lowered[::-1])):
            insort(table.setdefault(account.ledger_id, []), (key, self._created, account))

    def exact(self, ledger_id: str, alias: str) -> Account | None:
        """The account whose alias is exactly `alias` (case-sensitive)."""
        return self._exact.get((ledger_id, alias))

    def with_prefix(self, ledger_id: str, prefix: str) -> list[Account]:
        """Accounts whose lower-case alias starts with `prefix`, oldest first."""
        return _run(self._forward.get(ledger_id, []), prefix)

    def with_suffix(self, ledger_id: str, suffix: str) -> list[Account]:
        """Accounts whose lower-case alias ends with `suffix`, oldest first."""
        return _run(self._reversed.get(ledger_id, []), suffix[::-1])


def _run(entries: list[Entry], prefix: str) -> list[Account]:
    """The accounts of the entries whose key starts with `prefix`, in creation order."""
    start = bisect_left(entries, prefix, key=lambda entry: entry[0])
    run = []
    for key, created, account in islice(entries, start, None):
        if not key.startswith(prefix):
            break
        run.append((created, account))
    run.sort(key=lambda pair: pair[0])
    return [account for _, account in run]
