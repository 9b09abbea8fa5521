"""Synthetic documents for tests and benchmarks (PDF, XML, CNAB240 remittance)."""


def make_pdf(target_size: int = 100_000, *, pages: int = 10) -> bytes:
    """A valid, uncompressed text PDF of roughly `target_size` bytes."""
    per_page = max(1, target_size // pages // 60)
    lines = [
        f"BT /F1 9 Tf 40 {800 - (i % 90) * 8} Td (Esteira sample line {i:06d} lorem ipsum) Tj ET"
        for i in range(per_page)
    ]
    content = "\n".join(lines).encode()
    page_ids = [4 + 2 * i for i in range(pages)]
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % p for p in page_ids)
        + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for page_id in page_ids:
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page_id + 1)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref_at,
    )
    return bytes(out)


def make_xml(items: int = 50) -> bytes:
    """A small invoice-like XML document."""
    rows = "".join(
        f'<item id="{i}"><sku>SKU-{i:05d}</sku><qty>{i % 7 + 1}</qty></item>' for i in range(items)
    )
    doc = f'<?xml version="1.0" encoding="UTF-8"?><lote xmlns="urn:esteira:sample">{rows}</lote>'
    return doc.encode()


def make_remittance(records: int = 20, *, payments: list[tuple[str, str, str]] | None = None
                    ) -> bytes:
    """A structurally valid CNAB240 remittance (240 columns, CRLF) of `records` lines.

    `payments` lists (segment, DDMMAAAA payment date, movement) detail records; by default
    segment A inclusions without a payment date fill the file.
    """
    details = payments if payments is not None else [("A", "00000000", "0")] * max(
        0, records - 4)
    lines = [_cnab_line("0", {143: "1"})]
    lines.append(_cnab_line("1", {9: "C"}))
    dates = {"A": 94, "J": 145, "N": 88, "O": 100}
    amounts = {"A": 120, "J": 153, "N": 96, "O": 108}
    for number, (segment, when, movement) in enumerate(details, start=1):
        fields = {9: f"{number:05d}", 14: segment, 15: movement}
        if segment in dates:
            fields[dates[segment]] = when
            fields[amounts[segment]] = f"{number * 1000:015d}"
        lines.append(_cnab_line("3", fields))
    lines.append(_cnab_line("5", {18: f"{len(details) + 2:06d}"}))
    lines.append(_cnab_line("9", {18: "000001", 24: f"{len(lines) + 1:06d}"}))
    return ("\r\n".join(lines) + "\r\n").encode("ascii")


def _cnab_line(record_type: str, fields: dict[int, str]) -> str:
    """One 240-column record of bank 001; `fields` maps 1-based positions to text."""
    line = list(f"001{'0001':4}{record_type}".ljust(240, " "))
    for position, text in fields.items():
        line[position - 1:position - 1 + len(text)] = text
    return "".join(line)[:240]


def make_deep_pdf(depth: int) -> bytes:
    """A one-page PDF whose page tree nests `depth` /Pages nodes (a hostile shape)."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(depth):
        number = 2 + level
        parent = b" /Parent %d 0 R" % (number - 1) if level else b""
        objects.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1%s >>" % (number + 1, parent))
    objects.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] >>" % (depth + 1))
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref_at)
    return bytes(out)
