"""docs/*.md and the README: their YAML parses and every project path they name exists."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.deploy.targets import REPO

DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [REPO / "README.md", *DOCS]
# A path of ours in backquotes: under a project folder, or a file at the top level.
TOP = ("activities", "bench", "deploy", "docs", "k8s", "proto", "scripts", "services", "shared",
       "tests", "workflows")
PATH = re.compile(r"`((?:" + "|".join(TOP) + r")/[\w./{},-]*)`")


def expand(path: str) -> list[str]:
    """`a/{b,c}/d` as `a/b/d` and `a/c/d`; a dated log file as its folder."""
    if "yyyyMMdd" in path:
        return [path.rsplit("/", 1)[0]]
    brace = re.search(r"\{([^{}]*)\}", path)
    if brace is None:
        return [path]
    return [p for choice in brace.group(1).split(",")
            for p in expand(path[:brace.start()] + choice + path[brace.end():])]


def test_every_page_is_checked():
    assert {page.name for page in DOCS} >= {
        "deployment.md", "runbooks.md", "signer.md", "sisbajud.md", "pickup.md",
        "configuration.md", "operating.md", "glossary.md", "dashboard.md"}


def test_the_yaml_blocks_parse():
    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "docs" / "deployment.md").read_text(),
                        flags=re.DOTALL)
    assert blocks
    for block in blocks:
        assert isinstance(yaml.safe_load(textwrap.dedent(block)), dict)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_project_path_it_names_exists(page: Path):
    named = [p for path in PATH.findall(page.read_text()) for p in expand(path)]
    missing = [path for path in named if not (REPO / path.rstrip("/")).exists()]
    assert not missing, missing


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped)."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_reaches_its_file_and_heading(page: Path):
    broken = []
    for target, anchor in re.findall(r"\]\(([^)#:]*)(?:#([^)]*))?\)", page.read_text()):
        linked = page.parent / target if target else page
        if not linked.exists() or (anchor and linked.suffix == ".md"
                                   and anchor not in anchors(linked)):
            broken.append(f"{target}#{anchor}")
    assert not broken, broken
