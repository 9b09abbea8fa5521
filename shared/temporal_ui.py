"""Where operators open the Temporal Web UI: the configured public URL, else this host's."""

from __future__ import annotations

from urllib.parse import urlsplit

from shared.settings import Settings

# Addresses a server listens on but a browser can't be sent to.
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "[::]"})


def temporal_ui_url(settings: Settings, *, seen_host: str | None = None) -> str:
    """`Dashboard:TemporalUiUrl`, else the embedded UI's port on the host the operator used
    (`seen_host`, the dashboard request's) or on `Host` when that is not a wildcard."""
    configured = settings.dashboard.temporal_ui_url
    if configured:
        return configured.rstrip("/")
    host = settings.host if settings.host not in WILDCARD_HOSTS else (seen_host or "127.0.0.1")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 literal
    return f"http://{host}:{settings.ports.temporal_ui}"


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL, as a browser sends it in `Origin`."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
