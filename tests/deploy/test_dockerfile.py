"""The Dockerfile: multi-stage, non-root, COPY sources real and not excluded, one entry point."""

from __future__ import annotations

import fnmatch
import re
import tomllib

from tests.deploy.targets import DOCKERFILE, ENTRYPOINT, REPO


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in joined.splitlines()]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
            for line in lines if line and not line.startswith("#")]


def _stages() -> list[str]:
    return [args.split()[-1] for op, args in _instructions() if op == "FROM"]


def _ignored(path: str) -> bool:
    """Docker's rule: the last matching .dockerignore pattern wins; `!` re-includes."""
    ignored = False
    for pattern in (REPO / ".dockerignore").read_text().splitlines():
        pattern = pattern.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        candidates = [pattern, pattern.removeprefix("**/")]
        if any(fnmatch.fnmatch(path, c) or path.startswith(c + "/") for c in candidates):
            ignored = not negate
    return ignored


def test_two_stages_and_the_runtime_is_last():
    assert _stages() == ["build", "runtime"]


def test_every_copied_source_exists_and_reaches_the_build_context():
    copies = [args for op, args in _instructions() if op == "COPY"
              and not args.startswith("--from")]
    assert copies
    for args in copies:
        *sources, _target = args.split()
        for source in sources:
            assert (REPO / source).exists(), source
            assert not _ignored(source), f"{source} is excluded by .dockerignore"


def test_the_image_holds_every_package_the_project_ships():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {p.rstrip("*") for p in include}
    copied = {args.split()[0] for op, args in _instructions()
              if op == "COPY" and not args.startswith("--from")}
    assert packages <= copied
    assert pyproject["project"]["scripts"][ENTRYPOINT] == "services.cli:main"


def test_the_runtime_runs_as_an_unprivileged_user_through_the_esteira_entry_point():
    runtime = _instructions()[[op for op, _ in _instructions()].index("FROM", 1):]
    users = [args for op, args in runtime if op == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert ('ENTRYPOINT', f'["{ENTRYPOINT}"]') in runtime
    assert ("CMD", '["api"]') in runtime


def test_the_ignore_rules_keep_local_state_out():
    for path in (".venv/bin/python", "data/db/esteira.db", ".git/HEAD", "tests/conftest.py",
                 "shared/__pycache__/x.pyc"):
        assert _ignored(path), path


def test_every_data_file_the_code_reads_is_packaged():
    """The image (and install.sh) install with `pip install .`: non-Python files reach
    site-packages only through package-data."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    packaged = {path for package, patterns in setuptools["package-data"].items()
                for pattern in patterns for path in (REPO / package).glob(pattern)}
    # Type stubs and READMEs are for people and editors, not for the running code.
    unpackaged = [
        str(path.relative_to(REPO))
        for package in ("shared", "services", "workflows", "activities")
        for path in (REPO / package).rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc", ".pyi", ".md")
        and "__pycache__" not in path.parts and path not in packaged]
    assert not unpackaged, f"add to [tool.setuptools.package-data]: {unpackaged}"
