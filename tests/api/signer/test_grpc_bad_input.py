"""Bad input over gRPC is INVALID_ARGUMENT request.invalid, never UNKNOWN: an out-of-range
Timestamp and request bytes that are not the method's message, on every kind of method."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from services.grpc_server.gen.esteira.signer.v1 import signer_pb2 as pb
from tests.api.signer.test_grpc_signer import KEY, SIGNER, refusal, refused, signer  # noqa: F401

INVALID = (grpc.StatusCode.INVALID_ARGUMENT, "request.invalid")
# Field 1, length-delimited, says 5 bytes follow but only 2 do.
CORRUPT = b"\x0a\x05ab"


@pytest.mark.parametrize("field", ["created_from", "created_to"])
async def test_a_timestamp_past_its_range_is_invalid_argument(signer, field):  # noqa: F811
    past_year_9999 = Timestamp(seconds=253402300800)
    request = pb.ListJobsRequest(**{field: past_year_9999})
    assert await refused(signer.stub.ListJobs(request, metadata=KEY)) == INVALID
    bad_nanos = pb.ListJobsRequest(**{field: Timestamp(seconds=0, nanos=-1)})
    assert await refused(signer.stub.ListJobs(bad_nanos, metadata=KEY)) == INVALID


async def test_corrupt_request_bytes_are_invalid_argument_on_every_kind(signer):  # noqa: F811
    channel = signer.channel
    unary = channel.unary_unary(f"/{SIGNER}/GetJob")
    assert await refused(unary(CORRUPT, metadata=KEY)) == INVALID
    streamed_out = channel.unary_stream(f"/{SIGNER}/WatchJobs")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in streamed_out(CORRUPT, metadata=KEY):
            pass
    assert refusal(caught.value) == INVALID
    streamed_in = channel.stream_unary(f"/{SIGNER}/SubmitFile")
    assert await refused(streamed_in(iter([CORRUPT]), metadata=KEY)) == INVALID
    # The server keeps serving: a well-formed call right after is answered.
    state = await signer.stub.GetPipelineState(pb.GetPipelineStateRequest(), metadata=KEY)
    assert state.paused is False
