"""API key check for gRPC calls (`x-api-key` metadata), health excepted."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc

from services.grpc_server.refusal import refuse
from shared.auth import keys_match
from shared.errors import ErrorCode, EsteiraError

PUBLIC_SERVICES = ("/grpc.health.v1.Health/",)
METADATA_KEY = "x-api-key"
# A refusal's handler, by (client streams, server streams): the same kind as the method's.
_DENY_KINDS = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


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
        if presented is not None and keys_match(presented, self._api_key):
            return await continuation(handler_call_details)
        # Building the handler reads nothing from the call: it only says which kind to deny.
        handler = await continuation(handler_call_details)
        if presented is None:
            error = EsteiraError(ErrorCode.AUTH_MISSING_KEY,
                                 f"The {METADATA_KEY} metadata is required.")
        else:
            error = EsteiraError(ErrorCode.AUTH_INVALID_KEY, "The API key is not valid.")
        return _deny(error, handler)


def _deny(error: EsteiraError, handler: grpc.RpcMethodHandler | None) -> grpc.RpcMethodHandler:
    """A handler of the method's own kind that refuses before reading any request."""
    # A unary handler on a client-streaming method would wait for a first message: an empty
    # stream then hung until the client's deadline instead of being refused.

    async def abort(_request, context: grpc.aio.ServicerContext) -> None:
        await refuse(context, error)

    streams_in = handler is not None and handler.request_streaming
    streams_out = handler is not None and handler.response_streaming
    return _DENY_KINDS[streams_in, streams_out](abort)
