"""A stood-down instance's last line: a task its open poll still took is handed back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from shared.instances import read_stood_down

# The gate stops polling within one read of the flag; a task a poll took before that comes
# back after this delay and, by then, finds a poller on another instance.
STOOD_DOWN_RETRY_DELAY = timedelta(seconds=2)
STOOD_DOWN = "InstanceStoodDown"


class StandDownRefusal(Interceptor):
    """Refuses each task before it claims anything while the instance `name` is stood down."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], name: str) -> None:
        self.sessions = sessions
        self.name = name

    def intercept_activity(self, next: ActivityInboundInterceptor
                           ) -> ActivityInboundInterceptor:
        """Wrap the activity inbound chain."""
        return _Refuse(next, self)


class _Refuse(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, owner: StandDownRefusal) -> None:
        super().__init__(next)
        self._owner = owner

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        async with self._owner.sessions() as session:
            stood_down = await read_stood_down(session, self._owner.name)
        if stood_down:
            # Retryable, unlimited attempts: another instance takes it; nothing was claimed.
            raise ApplicationError(f"Instance {self._owner.name} is stood down: the task is "
                                   "left to another instance.", type=STOOD_DOWN,
                                   next_retry_delay=STOOD_DOWN_RETRY_DELAY)
        return await super().execute_activity(input)
