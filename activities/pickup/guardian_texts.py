"""What the guardian app says for each notification kind, in the seed's Portuguese.

The READY timeout's text ("... foi revertida: tempo de prontidão esgotado.") is written where
the reversion is, one student (`board.revert_ready`) or many (`bulk`).
"""

from __future__ import annotations


def arrival_acknowledged(name: str) -> str:
    """"Estou chegando" was received."""
    return f"Recebemos o aviso de chegada para {name}: a escola já está preparando a saída."


def ready(name: str) -> str:
    """The student waits at the exit with a live credential."""
    return f"{name} está na saída: a retirada está liberada na catraca."


def picked_up(name: str, *, by: str | None, turnstile: bool) -> str:
    """The pickup happened, and who (or where) closed it."""
    if by:
        return f"A retirada de {name} foi concluída por {by}."
    if turnstile:
        return f"A retirada de {name} foi concluída na saída da catraca."
    return f"A retirada de {name} foi confirmada pela escola."


def early_release_approved(name: str) -> str:
    """The school approved an early release."""
    return f"A saída antecipada de {name} foi aprovada pela escola."
