from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetBoardRequest(_message.Message):
    __slots__ = ("school_id",)
    SCHOOL_ID_FIELD_NUMBER: _ClassVar[int]
    school_id: int
    def __init__(self, school_id: _Optional[int] = ...) -> None: ...

class StudentState(_message.Message):
    __slots__ = ("id", "school_id", "name", "state", "version", "reason", "state_since")
    ID_FIELD_NUMBER: _ClassVar[int]
    SCHOOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATE_SINCE_FIELD_NUMBER: _ClassVar[int]
    id: int
    school_id: int
    name: str
    state: str
    version: int
    reason: str
    state_since: str
    def __init__(self, id: _Optional[int] = ..., school_id: _Optional[int] = ..., name: _Optional[str] = ..., state: _Optional[str] = ..., version: _Optional[int] = ..., reason: _Optional[str] = ..., state_since: _Optional[str] = ...) -> None: ...

class GetBoardResponse(_message.Message):
    __slots__ = ("students",)
    STUDENTS_FIELD_NUMBER: _ClassVar[int]
    students: _containers.RepeatedCompositeFieldContainer[StudentState]
    def __init__(self, students: _Optional[_Iterable[_Union[StudentState, _Mapping]]] = ...) -> None: ...

class ConfirmPickupRequest(_message.Message):
    __slots__ = ("student_id", "version")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    student_id: int
    version: int
    def __init__(self, student_id: _Optional[int] = ..., version: _Optional[int] = ...) -> None: ...

class GetLedgerSummaryRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LedgerSummary(_message.Message):
    __slots__ = ("pending", "failed", "oldest_pending_seconds")
    PENDING_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    OLDEST_PENDING_SECONDS_FIELD_NUMBER: _ClassVar[int]
    pending: int
    failed: int
    oldest_pending_seconds: float
    def __init__(self, pending: _Optional[int] = ..., failed: _Optional[int] = ..., oldest_pending_seconds: _Optional[float] = ...) -> None: ...
