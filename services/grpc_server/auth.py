"""API key check for gRPC calls (`x-api-key` metadata), health excepted."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc

from shared.auth import keys_match

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
        metadata = dict(handler_call_details.invocation_metadata or ())
        if keys_match(metadata.get(METADATA_KEY), self._api_key):
            return await continuation(handler_call_details)
        return _deny()


def _deny() -> grpc.RpcMethodHandler:
    async def abort(_request, context: grpc.aio.ServicerContext) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "auth.invalid-key: API key required")

    return grpc.unary_unary_rpc_method_handler(abort)
