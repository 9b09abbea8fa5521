"""A small server-rendered SVG of one outbound queue over a period: pending and failed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from html import escape

WIDTH, HEIGHT, PAD = 480, 120, 24


@dataclass(frozen=True)
class Point:
    """One queue snapshot: when, and how many commands were pending / failed."""

    at: datetime
    pending: int
    failed: int


# Pending solid blue, failed dashed red: told apart without colour too.
STROKES = {"pending": 'stroke="#1f6feb" stroke-width="2"',
           "failed": 'stroke="#cf222e" stroke-width="2" stroke-dasharray="4 3"'}


def _polyline(points: list[Point], value, since: datetime, span: float, top: int,
              css: str) -> str:
    plot_w, plot_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    coords = " ".join(
        f"{PAD + plot_w * (p.at - since).total_seconds() / span:.1f},"
        f"{PAD + plot_h - plot_h * value(p) / top:.1f}" for p in points)
    return f'<polyline class="{css}" fill="none" {STROKES[css]} points="{coords}"/>'


def queue_svg(queue: str, points: list[Point], *, since: datetime, until: datetime) -> str:
    """The queue's pending (solid) and failed (dashed) counts from `since` to `until`."""
    name = escape(queue)
    if points:
        last = points[-1]
        summary = (f"{name}: {last.pending} pending and {last.failed} failed now; at most "
                   f"{max(p.pending for p in points)} pending and "
                   f"{max(p.failed for p in points)} failed since "
                   f"{since:%Y-%m-%d %H:%M} UTC")
    else:
        summary = f"{name}: no snapshot since {since:%Y-%m-%d %H:%M} UTC"
    top = max([1] + [max(p.pending, p.failed) for p in points])
    span = max((until - since).total_seconds(), 1.0)
    ident = f"queue-{name}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="queue-chart" role="img" '
        f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'aria-labelledby="{ident}-title">',
        f'<title id="{ident}-title">{summary}</title>',
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="currentColor" stroke-width="1"/>',
        f'<text x="{PAD}" y="{PAD - 8}" font-size="11" fill="currentColor">{name} '
        f'(max {top})</text>',
        f'<text x="{PAD}" y="{HEIGHT - 6}" font-size="10" fill="currentColor">'
        f'{since:%H:%M}</text>',
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 6}" font-size="10" fill="currentColor" '
        f'text-anchor="end">{until:%H:%M} UTC</text>',
    ]
    if points:
        parts.append(_polyline(points, lambda p: p.pending, since, span, top, "pending"))
        parts.append(_polyline(points, lambda p: p.failed, since, span, top, "failed"))
    parts.append("</svg>")
    return "".join(parts)
