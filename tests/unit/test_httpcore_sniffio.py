"""httpcore asks sniffio which event loop runs on every request: it must be installed."""

from __future__ import annotations

import importlib.util


def test_sniffio_is_installed_so_httpcore_does_not_search_the_path_per_request():
    # Without it each request's `import sniffio` fails after a stat of every sys.path entry
    # (about 5 % of the SISBAJUD worker's CPU under bench/sisbajud_webhook.py --profile).
    assert importlib.util.find_spec("sniffio") is not None
