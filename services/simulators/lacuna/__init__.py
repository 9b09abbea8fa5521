"""Lacuna Signer REST API simulator (see `app.create_app`)."""

from services.simulators.lacuna.app import create_app, main
from services.simulators.lacuna.settings import LacunaSimSettings

__all__ = ["LacunaSimSettings", "create_app", "main"]
