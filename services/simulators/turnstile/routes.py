"""The device's own HTTP API: `POST /<command>.fcgi` with `?session=`."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from services.simulators.turnstile.device import Device
from services.simulators.turnstile.state import DeviceError

router = APIRouter()


def get_device(request: Request) -> Device:
    """The simulated controller behind this app."""
    return request.app.state.device


DeviceDep = Annotated[Device, Depends(get_device)]


async def body_of(request: Request) -> dict[str, Any]:
    """The JSON object sent; an empty body reads as `{}`."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise DeviceError(400, "invalid JSON") from exc
    if not isinstance(body, dict):
        raise DeviceError(400, "request body must be a JSON object")
    return body


Body = Annotated[dict[str, Any], Depends(body_of)]


def session(request: Request, device: DeviceDep) -> str:
    """The `?session=` token, which must be live; every command but login needs one."""
    token = request.query_params.get("session")
    if not device.sessions.touch(token):
        raise DeviceError(401, "Invalid session")
    return token or ""


Session = Annotated[str, Depends(session)]


@router.post("/login.fcgi")
async def login(device: DeviceDep, body: Body) -> dict[str, str]:
    """Open a session with the device's admin credentials."""
    if not isinstance(body.get("login"), str) or not isinstance(body.get("password"), str):
        raise DeviceError(400, "login and password are required")
    s = device.settings
    if body["login"] != s.login or body["password"] != s.password:
        raise DeviceError(401, "Invalid login or password")
    return {"session": device.sessions.issue()}


@router.post("/logout.fcgi")
async def logout(device: DeviceDep, token: Session) -> Response:
    """End the session; the device answers with an empty body."""
    device.sessions.revoke(token)
    return Response(status_code=200)


@router.post("/session_is_valid.fcgi")
async def session_is_valid(request: Request, device: DeviceDep) -> dict[str, bool]:
    """Whether `?session=` is live; never an error."""
    return {"session_is_valid": device.sessions.touch(request.query_params.get("session"))}


@router.post("/create_objects.fcgi")
async def create_objects(device: DeviceDep, _: Session, body: Body) -> dict[str, list[int]]:
    """Insert rows (all or none) and return their ids."""
    return {"ids": device.store.create(body.get("object"), body.get("values"))}


@router.post("/create_or_modify_objects.fcgi")
async def create_or_modify_objects(device: DeviceDep, _: Session, body: Body) -> dict[str, int]:
    """Upsert rows by id (by the linked pair for link tables)."""
    return {"changes": device.store.create_or_modify(body.get("object"), body.get("values"))}


@router.post("/load_objects.fcgi")
async def load_objects(device: DeviceDep, _: Session, body: Body) -> dict[str, Any]:
    """Rows of one object, filtered by `where`, shaped by fields/order/limit/offset."""
    obj = body.get("object")
    rows = device.store.load(
        obj,
        where=body.get("where"),
        fields=body.get("fields"),
        order=body.get("order"),
        limit=body.get("limit"),
        offset=body.get("offset"),
    )
    assert isinstance(obj, str)  # load refused any other object
    return {obj: rows}


@router.post("/modify_objects.fcgi")
async def modify_objects(device: DeviceDep, _: Session, body: Body) -> dict[str, int]:
    """Update matching rows; `changes` counts rows matched."""
    return {
        "changes": device.store.modify(body.get("object"), body.get("values"), body.get("where"))
    }


@router.post("/destroy_objects.fcgi")
async def destroy_objects(device: DeviceDep, _: Session, body: Body) -> dict[str, int]:
    """Delete matching rows (and dependent links); deleting nothing is `changes: 0`."""
    return {"changes": device.store.destroy(body.get("object"), body.get("where"))}


@router.post("/execute_actions.fcgi")
async def execute_actions(device: DeviceDep, _: Session, body: Body) -> Response:
    """Remote turnstile release (`catra`); the device sends no body back."""
    actions = body.get("actions")
    if not isinstance(actions, list) or not actions:
        raise DeviceError(400, "actions must be a non-empty list")
    for action in actions:
        if not isinstance(action, dict) or action.get("action") != "catra":
            raise DeviceError(400, f"unsupported action on this device: {action}")
        device.release(str(action.get("parameters", "")))
    return Response(status_code=200)


def _sections(device: Device) -> dict[str, dict[str, str]]:
    return {"monitor": device.monitor.config, "general": device.general, "catra": device.catra}


@router.post("/set_configuration.fcgi")
async def set_configuration(device: DeviceDep, _: Session, body: Body) -> dict[str, Any]:
    """Store configuration values (strings, as on the device); monitor.* redirects pushes."""
    sections = _sections(device)
    for name, values in body.items():
        if name not in sections or not isinstance(values, dict):
            raise DeviceError(400, f"invalid configuration section: {name}")
        if not all(isinstance(v, str) for v in values.values()):
            raise DeviceError(400, f"configuration values must be strings: {name}")
        if name == "catra" and values.get("gateway", "clockwise") not in {
            "clockwise",
            "anticlockwise",
        }:
            raise DeviceError(400, "catra.gateway must be clockwise or anticlockwise")
    for name, values in body.items():
        sections[name].update(values)
    return {}


@router.post("/get_configuration.fcgi")
async def get_configuration(device: DeviceDep, _: Session, body: Body) -> dict[str, Any]:
    """Requested keys per section: `{"monitor": ["hostname"]}` -> `{"monitor": {...}}`."""
    sections = _sections(device)
    out: dict[str, dict[str, str]] = {}
    for name, keys in body.items():
        if name not in sections or not isinstance(keys, list):
            raise DeviceError(400, f"invalid configuration section: {name}")
        out[name] = {k: sections[name][k] for k in keys if k in sections[name]}
    return out


@router.get("/get_catra_info.fcgi")
async def get_catra_info(device: DeviceDep, _: Session) -> dict[str, int]:
    """Turn counters of the turnstile arm."""
    turns = device.turns
    return {**turns, "total_turns": turns["left_turns"] + turns["right_turns"]}
