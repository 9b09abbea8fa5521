"""Synthetic documents for tests and benchmarks (PDF, XML, CNAB-like remittance)."""


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


def make_remittance(records: int = 20) -> bytes:
    """CNAB240-shaped fixed-width text (240 columns, CRLF); not a valid remittance."""
    lines = [f"{'001':3}{i:04d}{'3':1}".ljust(240, "0") for i in range(records)]
    return ("\r\n".join(lines) + "\r\n").encode("ascii")
