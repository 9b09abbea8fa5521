"""Keyset pages: a cursor walks every row once, in order, and a forged cursor is refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, Table, select
from sqlalchemy.ext.asyncio import create_async_engine

from shared.errors import EsteiraError
from shared.paging import after, bounded, decode_cursor, encode_cursor, page_of
from shared.wire import PageOut, WireModel

# Its own metadata: the models' metadata is compared with the migrations elsewhere.
ROWS = Table("paged_rows", MetaData(), Column("id", Integer, primary_key=True),
             Column("created_at", DateTime(timezone=True)))


def test_a_cursor_round_trips_its_key():
    at = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    assert decode_cursor(encode_cursor(at, 7, "x"), datetime, int, str) == (at, 7, "x")


@pytest.mark.parametrize("cursor", ["", "not base64!", encode_cursor(1), encode_cursor("a", 1),
                                    encode_cursor(True, 1)])
def test_a_cursor_that_is_not_ours_is_request_invalid(cursor):
    with pytest.raises(EsteiraError) as refused:
        decode_cursor(cursor, int, int)
    assert refused.value.code == "request.invalid"


@pytest.mark.parametrize("descending", [True, False])
async def test_pages_visit_every_row_once_in_order(tmp_path, descending):
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    async with engine.begin() as connection:
        await connection.run_sync(ROWS.metadata.create_all)
        await connection.execute(ROWS.insert(), [
            {"id": i, "created_at": start + timedelta(minutes=i // 3)} for i in range(20)])
    seen, cursor = [], None
    async with engine.connect() as connection:
        while True:
            query = after(select(ROWS), [ROWS.c.created_at, ROWS.c.id], cursor,
                          kinds=(datetime, int), descending=descending).limit(4 + 1)
            page = page_of((await connection.execute(query)).all(), 4,
                           lambda r: (r.created_at, r.id))
            seen += [row.id for row in page.items]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    await engine.dispose()
    assert seen == (sorted(range(20), reverse=True) if descending else list(range(20)))


def test_limits_are_bounded():
    assert (bounded(0), bounded(50), bounded(10**9)) == (1, 50, 500)


def test_the_wire_is_camel_case_both_ways():
    class Answer(WireModel):
        next_step: str

    assert PageOut[Answer](items=[Answer(next_step="x")]).model_dump(by_alias=True) == {
        "items": [{"nextStep": "x"}], "nextCursor": None}
    assert Answer.model_validate({"nextStep": "y"}).next_step == "y"
