"""The one way a gRPC service refuses: the code's gRPC status from its contract's error table,
with the stable code in a `google.rpc.ErrorInfo` (so codes sharing a status stay apart)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from shared.errors import EsteiraError

ERROR_DOMAIN = "esteira"
T = TypeVar("T")


def error_status(error: EsteiraError) -> grpc.Status:
    """The status of `error` with an ErrorInfo(reason=code, metadata.httpStatus)."""
    code = grpc.StatusCode[error.grpc_status]
    info = error_details_pb2.ErrorInfo(reason=error.code, domain=ERROR_DOMAIN,
                                       metadata={"httpStatus": str(error.status)})
    detail = any_pb2.Any()
    detail.Pack(info)
    return rpc_status.to_status(status_pb2.Status(
        code=code.value[0], message=f"{error.code}: {error.message}", details=[detail]))


async def refuse(context: grpc.aio.ServicerContext, error: EsteiraError) -> NoReturn:
    """End the call with `error`'s status (for streaming methods and interceptors)."""
    await context.abort_with_status(error_status(error))
    raise AssertionError("abort_with_status returned")  # it always raises


def refusals(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Turn the `EsteiraError` a unary (or client-streaming) method raises into its status."""

    @functools.wraps(method)
    async def call(self: Any, request: Any, context: grpc.aio.ServicerContext) -> T:
        try:
            return await method(self, request, context)
        except EsteiraError as error:
            await refuse(context, error)

    return call
