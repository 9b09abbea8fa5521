"""docs/deployment.md: its YAML parses and every project path it names exists."""

from __future__ import annotations

import re
import textwrap

import yaml

from tests.deploy.targets import REPO

DOC = REPO / "docs" / "deployment.md"


def test_the_yaml_blocks_parse():
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert blocks
    for block in blocks:
        assert isinstance(yaml.safe_load(textwrap.dedent(block)), dict)


def test_every_project_path_it_names_exists():
    named = re.findall(r"`((?:deploy|k8s|tests|services|docs)/[\w./-]*)`", DOC.read_text())
    assert named
    # A dated log file names its folder; the file itself appears at run time.
    paths = [p.rsplit("/", 1)[0] if "yyyyMMdd" in p else p for p in named]
    missing = [path for path in paths if not (REPO / path.rstrip("/")).exists()]
    assert not missing, missing
