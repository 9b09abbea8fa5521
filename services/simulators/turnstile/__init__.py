"""Control iD-style turnstile controller simulator (see `app.create_app`)."""

from services.simulators.turnstile.app import create_app, main
from services.simulators.turnstile.settings import TurnstileSimSettings

__all__ = ["TurnstileSimSettings", "create_app", "main"]
