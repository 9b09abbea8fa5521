from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("version", "environment", "pipeline_paused", "pause_reason")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_PAUSED_FIELD_NUMBER: _ClassVar[int]
    PAUSE_REASON_FIELD_NUMBER: _ClassVar[int]
    version: str
    environment: str
    pipeline_paused: bool
    pause_reason: str
    def __init__(self, version: _Optional[str] = ..., environment: _Optional[str] = ..., pipeline_paused: _Optional[bool] = ..., pause_reason: _Optional[str] = ...) -> None: ...
