"""The import rules of the domain shape (the README's Layout), each one a check over the graph."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise

from tests.architecture.imports import Graph, Import


@dataclass(frozen=True)
class Violation:
    """One import a rule forbids, or one cycle."""

    rule: str
    text: str


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _domain(graph: Graph, name: str) -> str | None:
    """`signer` for `activities.signer.x` or `workflows.signer.x`; None outside a domain."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] not in ("activities", "workflows"):
        return None
    package = graph.modules.get(f"{parts[0]}.{parts[1]}")
    return parts[1] if package is not None and package.name == "__init__.py" else None


def _ours(graph: Graph) -> Iterator[Import]:
    return (i for i in graph.imports if graph.ours(i.target))


def _forbid(rule: str, why: str, found: Import) -> Violation:
    return Violation(rule, f"{found.where()}: {found.source} imports {found.target} ({why})")


def services_use_domain_faces(graph: Graph) -> list[Violation]:
    """(a) A service reaches a domain only through its face, the `activities.<d>.operator`
    package itself (never a module inside it), its contracts and its records (the table
    models a face returns); the worker host through `activities.<d>.worker` instead of the
    face; and no service imports `workflows`."""
    found = []
    for i in _ours(graph):
        if not _under(i.source, "services") or _under(i.source, "services.simulators"):
            continue
        if _under(i.target, "workflows"):
            found.append(_forbid("a", "services never import workflows", i))
        elif _under(i.target, "activities"):
            domain = _domain(graph, i.target)
            entry = "worker" if _under(i.source, "services.worker") else "operator"
            allowed = domain is not None and (
                (i.target == f"activities.{domain}.{entry}" if entry == "operator"
                 else _under(i.target, f"activities.{domain}.worker"))
                or any(_under(i.target, f"activities.{domain}.{part}")
                       for part in ("contracts", "models")))
            if not allowed:
                why = (f"services import a domain only as activities.<d>.{entry}, its "
                       "contracts or its models")
                found.append(_forbid("a", why, i))
    return found


def shared_is_domain_free(graph: Graph) -> list[Violation]:
    """(b) `shared/` imports nothing from activities, workflows or services, but for one
    assembly point: `shared.settings` builds the one `Settings` from each domain's section,
    `activities.<d>.settings` (which itself imports nothing of `shared.settings`)."""
    found = []
    for i in _ours(graph):
        if not _under(i.source, "shared") or not any(
                _under(i.target, p) for p in ("activities", "workflows", "services")):
            continue
        domain = _domain(graph, i.target)
        if i.source == "shared.settings" and domain is not None \
                and i.target == f"activities.{domain}.settings":
            continue
        found.append(_forbid("b", "shared/ is domain-free", i))
    return found


def simulators_import_only_contracts(graph: Graph) -> list[Violation]:
    """(c) A simulator imports nothing of ours but contracts (`activities.<d>.contracts`,
    `shared.contracts`) and simulators."""
    found = []
    for i in _ours(graph):
        if not _under(i.source, "services.simulators"):
            continue
        domain = _domain(graph, i.target)
        if any(_under(i.target, p) for p in ("shared.contracts", "services.simulators")) or (
                domain is not None and _under(i.target, f"activities.{domain}.contracts")):
            continue
        found.append(_forbid("c", "simulators import only contracts and simulators", i))
    return found


def domains_stay_apart(graph: Graph) -> list[Violation]:
    """(e) A domain's activities and workflows import no other domain's activities or
    workflows (a workflow may import its own domain's activities for `execute_activity`)."""
    found = []
    for i in _ours(graph):
        if not (_under(i.source, "activities") or _under(i.source, "workflows")):
            continue
        if not (_under(i.target, "activities") or _under(i.target, "workflows")):
            continue
        mine, theirs = _domain(graph, i.source), _domain(graph, i.target)
        if theirs is not None and mine != theirs:
            found.append(_forbid("e", f"domain {mine or '(none)'} reaches into {theirs}", i))
    return found


def domains_never_import_services(graph: Graph) -> list[Violation]:
    """(f) Activities and workflows sit below the doors: they import no `services` module."""
    return [_forbid("f", "domain code never imports a door", i) for i in _ours(graph)
            if (_under(i.source, "activities") or _under(i.source, "workflows"))
            and _under(i.target, "services")]


# The doors: each takes requests from outside and calls the domains' faces. What two doors
# share (the app's context, problem documents, readiness) sits outside all of them.
DOORS = ("services.api", "services.dashboard", "services.grpc_server", "services.watcher",
         "services.webhook_gateway")


def door_of(name: str) -> str | None:
    """The door package `name` belongs to, if any."""
    return next((door for door in DOORS if _under(name, door)), None)


def doors_stay_apart(graph: Graph) -> list[Violation]:
    """(g) A door never imports another door."""
    found = []
    for i in _ours(graph):
        mine, theirs = door_of(i.source), door_of(i.target)
        if mine is not None and theirs is not None and mine != theirs:
            found.append(_forbid("g", f"door {mine} reaches into door {theirs}", i))
    return found


def no_cycles(graph: Graph) -> list[Violation]:
    """(d) No import cycle among our modules, function-level and type-only imports included."""
    edges: dict[str, dict[str, Import]] = {name: {} for name in graph.modules}
    for i in graph.imports:
        if i.target in graph.modules and i.target != i.source:
            edges[i.source].setdefault(i.target, i)
    found = []
    for component in strongly_connected(edges):
        if len(component) < 2:
            continue
        # The shortest cycle through each member: every module caught in it shows up.
        cycles: dict[tuple[str, ...], list[str]] = {}
        for member in component:
            cycle = _cycle_through(member, edges, set(component))[:-1]
            turn = cycle.index(min(cycle))
            key = tuple(cycle[turn:] + cycle[:turn])
            cycles.setdefault(key, [*key, key[0]])
        found += [Violation("d", _describe(cycle, edges)) for cycle in cycles.values()]
    return found


def strongly_connected(edges: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _cycle_through(start: str, edges: dict[str, dict[str, Import]],
                   inside: set[str]) -> list[str]:
    """The shortest path from `start` back to itself inside its component (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges[node]):
                if child not in inside:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    return [start]


def _describe(cycle: list[str], edges: dict[str, dict[str, Import]]) -> str:
    steps = [f"{a} -> {b} ({edges[a][b].where()})" for a, b in pairwise(cycle)]
    return "cycle: " + "; ".join(steps)


RULES: list[Callable[[Graph], list[Violation]]] = [
    services_use_domain_faces, shared_is_domain_free, simulators_import_only_contracts,
    no_cycles, domains_stay_apart, domains_never_import_services, doors_stay_apart,
]


def check(graph: Graph) -> list[Violation]:
    """Every rule's violations, in rule order."""
    return [v for rule in RULES for v in rule(graph)]
