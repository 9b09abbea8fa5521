"""The API process's app: the REST API and the dashboard, each its own door."""

from __future__ import annotations

from fastapi import FastAPI

from services.api.app import create_rest_app
from services.app_context import ApiContext
from services.dashboard.install import install_dashboard


def create_app(context: ApiContext) -> FastAPI:
    """Both doors on one app around one `ApiContext` (no I/O happens here)."""
    app = create_rest_app(context)
    install_dashboard(app, context)
    return app
