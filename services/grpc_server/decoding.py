"""Request messages decoded where a refusal can be sent: corrupt bytes are INVALID_ARGUMENT.

grpc decodes a request before the method runs and answers UNKNOWN when the bytes are not the
message; this interceptor hands the method's own deserializer to a wrapper that refuses instead.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from services.grpc_server.refusal import refuse
from shared.errors import ErrorCode, EsteiraError

Deserializer = Callable[[bytes], Any]
# A handler's constructor, by (client streams, server streams).
_KINDS = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


class DecodingInterceptor(grpc.aio.ServerInterceptor):
    """Decodes each request message inside the call, refusing corrupt bytes."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_deserializer is None:
            return handler
        return decoding(handler)


def decoding(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """The same method taking raw bytes and decoding them itself."""
    deserialize = handler.request_deserializer
    streams_in, streams_out = handler.request_streaming, handler.response_streaming
    behavior = (handler.unary_unary or handler.unary_stream or handler.stream_unary
                or handler.stream_stream)

    async def requests(raw: Any, context: grpc.aio.ServicerContext) -> Any:
        if streams_in:
            return _decoded(deserialize, raw, context)
        return await _decode(deserialize, raw, context)

    if inspect.isasyncgenfunction(behavior):
        async def call(raw: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            async for reply in behavior(await requests(raw, context), context):
                yield reply
    else:
        async def call(raw: Any, context: grpc.aio.ServicerContext) -> Any:  # type: ignore[misc]
            return await behavior(await requests(raw, context), context)

    return _KINDS[streams_in, streams_out](
        call, request_deserializer=None, response_serializer=handler.response_serializer)


async def _decode(deserialize: Deserializer, raw: bytes,
                  context: grpc.aio.ServicerContext) -> Any:
    try:
        return deserialize(raw)
    except DecodeError:
        await refuse(context, EsteiraError(ErrorCode.REQUEST_INVALID,
                                           "The request message could not be decoded."))


async def _decoded(deserialize: Deserializer, raws: AsyncIterator[bytes],
                   context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
    async for raw in raws:
        yield await _decode(deserialize, raw, context)
