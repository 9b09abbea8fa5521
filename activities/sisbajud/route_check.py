"""The preflight's question to Midaz: does each route id the documents name exist there."""

from __future__ import annotations

from typing import Any

import httpx

from activities.sisbajud.clients import MidazClient, UpstreamError
from activities.sisbajud.routing import ACTIONS, Preflight, Resolution, routes_for
from shared.settings import Settings

# Which operation route may stand on each side of a leg (Midaz's `operationType` values).
SIDES = (("sourceRouteId", ("source", "bidirectional")),
         ("destinationRouteId", ("destination", "bidirectional")))
# Midaz answers an id it does not hold with 404 `0105` (transaction) or `0101` (operation).
UNKNOWN = 404


async def check_routes(settings: Settings, documents: dict[str, Any], http: httpx.AsyncClient,
                       report: Preflight) -> None:
    """Ask each institution's Midaz for every route its bindings name; problems into `report`."""
    for institution in settings.sisbajud.institutions:
        midaz = MidazClient.for_institution(http, settings, institution)
        seen: dict[tuple[str, str], dict[str, Any] | None] = {}
        where = dict(institutionId=institution.id, organizationId=institution.organization_id,
                     ledgerId=institution.ledger_id)
        for action in ACTIONS:
            routes = routes_for(documents, institution.organization_id, institution.ledger_id,
                                action)
            if routes.resolution != Resolution.ROUTES or routes.routes is None:
                continue  # off, or already a problem the documents show
            ids = routes.routes.model_dump(by_alias=True)
            found = await _route(midaz, "transaction", ids["transactionRouteId"], seen, report,
                                 action=action, **where)
            members = {r.get("id") for r in (found or {}).get("operationRoutes") or []}
            for field, types in SIDES:
                route = await _route(midaz, "operation", ids[field], seen, report,
                                     action=action, field=field, **where)
                if route is None:
                    continue
                if route.get("operationType") not in types:
                    report.problems.append(_problem(
                        "routing.route-type-mismatch",
                        f"operation route {ids[field]} is {route.get('operationType')!r}, "
                        f"not {' or '.join(types)}", action=action, field=field, **where))
                if members and ids[field] not in members:
                    report.problems.append(_problem(
                        "routing.route-not-in-transaction-route",
                        f"operation route {ids[field]} is not one of transaction route "
                        f"{ids['transactionRouteId']}'s", action=action, field=field, **where))


async def _route(midaz: MidazClient, kind: str, route_id: str,
                 seen: dict[tuple[str, str], dict[str, Any] | None], report: Preflight,
                 **where: str) -> dict[str, Any] | None:
    if (kind, route_id) in seen:
        return seen[(kind, route_id)]
    route: dict[str, Any] | None = None
    try:
        response = await midaz.accounting_route(kind, route_id)
    except (UpstreamError, httpx.HTTPError) as exc:
        report.problems.append(_problem("routing.route-unverified",
                                        f"{kind} route {route_id}: Midaz could not be asked: "
                                        f"{exc}", routeId=route_id, **where))
    else:
        if response.status_code == 200:
            route = response.json()
        elif response.status_code == UNKNOWN:
            report.problems.append(_problem("routing.route-unknown",
                                            f"Midaz has no {kind} route {route_id}",
                                            routeId=route_id, **where))
        else:
            report.problems.append(_problem("routing.route-unverified",
                                            f"{kind} route {route_id}: Midaz answered "
                                            f"{response.status_code}", routeId=route_id,
                                            **where))
    seen[(kind, route_id)] = route
    return route


def _problem(code: str, detail: str, **where: str) -> dict[str, Any]:
    return {"code": code, "detail": detail, **where}
