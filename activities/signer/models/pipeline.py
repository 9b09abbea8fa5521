"""Reading the durable pause flag (the signer's operator API writes it)."""

from __future__ import annotations

from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.models import PipelineState


async def read_pipeline_state(session: AsyncSession) -> PipelineState:
    """The pause row, or a running default when none was ever written."""
    return await session.get(PipelineState, 1) or PipelineState()
