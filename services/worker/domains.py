"""Which workflows and activities each domain contributes to a worker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shared.settings import Settings


@dataclass(frozen=True)
class DomainWorker:
    """One Temporal worker's worth of a domain: a task queue and what polls it."""

    task_queue: str
    workflows: list[type] = field(default_factory=list)
    activities: list[Callable[..., Any]] = field(default_factory=list)
    max_concurrent_activities: int | None = None


def _ops(_settings: Settings) -> list[DomainWorker]:
    from activities.ops.probe import echo
    from shared.contracts.ops import TASK_QUEUE
    from workflows.ops.probe import ProbeWorkflow

    return [DomainWorker(TASK_QUEUE, workflows=[ProbeWorkflow], activities=[echo])]


# Domains register here as they land; imports stay inside the builders so a worker only
# loads the domains it runs.
DOMAINS: dict[str, Callable[[Settings], list[DomainWorker]]] = {"ops": _ops}


class UnknownDomainError(ValueError):
    """A `--domains` entry that no domain answers to."""


def select(names: str) -> list[str]:
    """Parse `--domains a,b` (or `all`) into known domain names."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted or wanted == ["all"]:
        return list(DOMAINS)
    unknown = [n for n in wanted if n not in DOMAINS]
    if unknown:
        raise UnknownDomainError(
            f"Unknown domain(s): {', '.join(unknown)}. Known: {', '.join(DOMAINS)}."
        )
    return wanted


def build(names: list[str], settings: Settings) -> list[DomainWorker]:
    """The workers for the chosen domains."""
    return [worker for name in names for worker in DOMAINS[name](settings)]
