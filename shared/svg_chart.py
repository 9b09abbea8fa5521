"""Small server-rendered SVG line charts: several series over a period, readable without colour
(each series its own dash pattern, named in a legend) and without sight (a <title> summary and
a <desc> with every series' figures)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from html import escape

WIDTH, HEIGHT, PAD, LEGEND_ROW = 480, 140, 28, 14
# Colour and dash per series, in order: told apart without colour too.
STROKES = [('#1f6feb', ''), ('#cf222e', '4 3'), ('#1a7f37', '1 3'), ('#8250df', '8 3 2 3'),
           ('#bf8700', '6 2'), ('#57606a', '2 2')]


@dataclass(frozen=True)
class Series:
    """One line: its name and its (moment, value) points, oldest first."""

    name: str
    points: list[tuple[datetime, float]]


def _stroke(index: int) -> str:
    colour, dash = STROKES[index % len(STROKES)]
    return (f'stroke="{colour}" stroke-width="2"'
            + (f' stroke-dasharray="{dash}"' if dash else ""))


def _fmt(value: float) -> str:
    return f"{value:g}"


def line_chart(ident: str, label: str, series: list[Series], *, since: datetime,
               until: datetime, unit: str = "") -> str:
    """`series` from `since` to `until` as one SVG; `label` names the chart, `unit` its
    values (`s`, `jobs`)."""
    name = escape(label)
    top = max([1.0] + [v for s in series for _, v in s.points])
    span = max((until - since).total_seconds(), 1.0)
    plot_w = WIDTH - 2 * PAD
    legend_h = LEGEND_ROW * ((len(series) + 2) // 3)
    plot_h = HEIGHT - 2 * PAD - legend_h
    summary = (f"{name} from {since:%H:%M} to {until:%H:%M} UTC: "
               + ("; ".join(f"{escape(s.name)} {_fmt(sum(v for _, v in s.points))}{unit} "
                            f"in all, at most {_fmt(max((v for _, v in s.points), default=0))}"
                            f"{unit}" for s in series) or "no data"))
    figures = "; ".join(f"{escape(s.name)}: " + (", ".join(
        f"{at:%H:%M} {_fmt(v)}{unit}" for at, v in s.points) or "none") for s in series)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="line-chart" role="img" '
        f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'aria-labelledby="{ident}-title {ident}-desc">',
        f'<title id="{ident}-title">{summary}</title>',
        f'<desc id="{ident}-desc">{figures or "no data"}</desc>',
        f'<line x1="{PAD}" y1="{PAD + plot_h}" x2="{WIDTH - PAD}" y2="{PAD + plot_h}" '
        'stroke="currentColor" stroke-width="1"/>',
        f'<text x="{PAD}" y="{PAD - 10}" font-size="11" fill="currentColor">{name} '
        f'(max {_fmt(top)}{unit})</text>',
        f'<text x="{PAD}" y="{PAD + plot_h + 12}" font-size="10" fill="currentColor">'
        f'{since:%H:%M}</text>',
        f'<text x="{WIDTH - PAD}" y="{PAD + plot_h + 12}" font-size="10" '
        f'fill="currentColor" text-anchor="end">{until:%H:%M} UTC</text>',
    ]
    for index, line in enumerate(series):
        coords = " ".join(
            f"{PAD + plot_w * (at - since).total_seconds() / span:.1f},"
            f"{PAD + plot_h - plot_h * value / top:.1f}" for at, value in line.points)
        if line.points:
            parts.append(f'<polyline fill="none" {_stroke(index)} points="{coords}"/>')
        x = PAD + (index % 3) * (plot_w // 3)
        y = HEIGHT - legend_h + LEGEND_ROW * (index // 3) + 4
        parts.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 18}" y2="{y - 4}" '
                     f'{_stroke(index)}/>')
        parts.append(f'<text x="{x + 22}" y="{y}" font-size="10" fill="currentColor">'
                     f'{escape(line.name)}</text>')
    parts.append("</svg>")
    return "".join(parts)
