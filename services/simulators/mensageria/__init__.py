"""In-memory Mensageria simulator: SISBAJUD orders out, execution results in."""

from services.simulators.mensageria.app import create_app, main

__all__ = ["create_app", "main"]
