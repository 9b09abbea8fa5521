"""The shared SVG line chart: each series drawn and named, readable without sight."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

from shared.svg_chart import Series, line_chart

SINCE = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
NS = {"svg": "http://www.w3.org/2000/svg"}


def test_every_series_is_a_line_with_a_legend_and_its_figures_in_the_text_alternative():
    svg = line_chart("demo", "Orders <per> state", [
        Series("ACCEPTED", [(SINCE, 2.0), (SINCE + timedelta(hours=1), 5.0)]),
        Series("RESOLVED", [(SINCE + timedelta(hours=1), 1.0)])],
        since=SINCE, until=SINCE + timedelta(hours=2))
    root = ET.fromstring(svg)  # well-formed: the label's "<" is escaped
    assert root.get("role") == "img" and root.get("aria-labelledby") == "demo-title demo-desc"
    title = root.find("svg:title", NS).text
    assert "ACCEPTED 7 in all, at most 5" in title and "RESOLVED 1 in all" in title
    assert root.find("svg:desc", NS).text == "ACCEPTED: 10:00 2, 11:00 5; RESOLVED: 11:00 1"
    lines = root.findall("svg:polyline", NS)
    assert len(lines) == 2 and lines[0].get("stroke-dasharray") is None
    assert lines[1].get("stroke-dasharray"), "the second series is told apart without colour"
    # At the top: the largest value at the plot's top edge, the first point at its left.
    assert lines[0].get("points").split()[1].endswith(",28.0")
    assert [t.text for t in root.findall("svg:text", NS)][-2:] == ["ACCEPTED", "RESOLVED"]


def test_no_data_says_so():
    svg = line_chart("empty", "Jobs", [], since=SINCE, until=SINCE + timedelta(hours=1))
    root = ET.fromstring(svg)
    assert "no data" in root.find("svg:title", NS).text
    assert root.find("svg:desc", NS).text == "no data"
    assert not root.findall("svg:polyline", NS)
