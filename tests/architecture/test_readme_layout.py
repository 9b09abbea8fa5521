"""The README's Layout names every folder of the code and every module at `services/` root,
and nothing that isn't there, so it can't go stale."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"

# The folders whose every sub-folder (two levels down) the Layout must name.
ROOTS = ("services", "activities", "workflows", "tests", "bench")
DEPTH = 3  # `services/api/routes`, `tests/unit/signer`: deeper folders go with their parent
# Not code: caches, and what benchmarks and tests write at run time (git-ignored).
SKIPPED = {"__pycache__", "results", "tmp"}
ENTRY = re.compile(r"[\w.-]+/|[\w.-]+\.py")


def layout_block(text: str) -> str:
    """The first code block of the README's `## Layout` section."""
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```\n", 2)[1]


def named_paths(block: str) -> set[str]:
    """Each path the tree names: indentation (two spaces) is nesting; the leading names of a
    line (ending in `/` or `.py`) are siblings, the rest of the line describes them."""
    parents: list[str] = []
    named = set()
    for line in block.splitlines():
        words = line.split()
        entries = []
        for word in words:
            if not ENTRY.fullmatch(word):
                break
            entries.append(word)
        if not entries:
            continue  # a description's second line
        level = (len(line) - len(line.lstrip(" "))) // 2
        prefix = parents[level - 1] if 0 < level <= len(parents) else ""
        for entry in entries:
            named.add(prefix + entry.rstrip("/"))
        parents[level:] = [prefix + entries[-1]]
    return named


def code_folders() -> set[str]:
    """Every folder under the roots, `DEPTH` path parts deep at most."""
    found = set()
    for root in ROOTS:
        for path in (REPO / root).rglob("*"):
            parts = path.relative_to(REPO).parts
            if path.is_dir() and len(parts) <= DEPTH and not any(
                    part in SKIPPED or part.startswith(".") for part in parts):
                found.add("/".join(parts))
    return found | set(ROOTS)


def service_modules() -> set[str]:
    return {f"services/{path.name}" for path in (REPO / "services").glob("*.py")
            if path.name != "__init__.py"}


def test_the_layout_names_every_folder_and_every_service_module():
    named = named_paths(layout_block(README.read_text()))
    missing = sorted((code_folders() | service_modules()) - named)
    assert not missing, f"README.md's Layout doesn't name: {missing}"


def test_everything_the_layout_names_exists():
    named = named_paths(layout_block(README.read_text()))
    gone = sorted(path for path in named if not (REPO / path).exists())
    assert not gone, f"README.md's Layout names what isn't there: {gone}"


def test_the_tree_is_read_by_its_indentation():
    block = ("services/   doors\n  api/   REST\n    routes/   topics\n  app.py x.py   two\n"
             "           a description's second line/\ntests/\n  unit/ api/\n")
    assert named_paths(block) == {
        "services", "services/api", "services/api/routes", "services/app.py",
        "services/x.py", "tests", "tests/unit", "tests/api"}
