"""App factory and process entry point of the Control iD turnstile simulator."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from services.simulators.turnstile import faults, routes, sim
from services.simulators.turnstile.device import Device
from services.simulators.turnstile.settings import TurnstileSimSettings
from services.simulators.turnstile.state import DeviceError


def create_app(
    settings: TurnstileSimSettings | None = None, *, clock: Callable[[], float] | None = None
) -> FastAPI:
    """A simulated controller; `app.state.device` is its in-memory state."""
    settings = settings or TurnstileSimSettings()
    device = Device(settings, clock)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await device.monitor.aclose()

    app = FastAPI(title="Control iD turnstile simulator", lifespan=lifespan)
    app.state.device = device

    @app.exception_handler(DeviceError)
    async def device_error(_: Request, exc: DeviceError) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    app.include_router(routes.router)
    app.include_router(sim.router)
    faults.install(app, device.faults)
    return app


def main(host: str | None = None, port: int | None = None) -> None:
    """Serve the simulator with uvicorn; settings come from `TURNSTILE_SIM_*`."""
    settings = TurnstileSimSettings()
    uvicorn.run(
        create_app(settings),
        host=host or settings.host,
        port=port if port is not None else settings.port,
        # The caller's logging, if it configured any (`esteira simulator turnstile` does).
        log_config=None,
    )
