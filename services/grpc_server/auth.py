"""API key check for gRPC calls (`x-api-key` metadata), health excepted."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc

from services.grpc_server.status import error_status
from shared.auth import keys_match
from shared.errors import ErrorCode, EsteiraError

PUBLIC_SERVICES = ("/grpc.health.v1.Health/",)
METADATA_KEY = "x-api-key"


class ApiKeyInterceptor(grpc.aio.ServerInterceptor):
    """Refuses calls without the right key with UNAUTHENTICATED."""

    def __init__(self, api_key: str) -> None:
        self._api_key = api_key

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method = handler_call_details.method
        if method.startswith(PUBLIC_SERVICES):
            return await continuation(handler_call_details)
        presented = dict(handler_call_details.invocation_metadata or ()).get(METADATA_KEY)
        if presented is None:
            return _deny(EsteiraError(ErrorCode.AUTH_MISSING_KEY,
                                      f"The {METADATA_KEY} metadata is required."))
        if keys_match(presented, self._api_key):
            return await continuation(handler_call_details)
        return _deny(EsteiraError(ErrorCode.AUTH_INVALID_KEY, "The API key is not valid."))


def _deny(error: EsteiraError) -> grpc.RpcMethodHandler:
    """A handler that refuses with the same code and details as any other refusal."""

    async def abort(_request, context: grpc.aio.ServicerContext) -> None:
        await context.abort_with_status(error_status(error))

    return grpc.unary_unary_rpc_method_handler(abort)
