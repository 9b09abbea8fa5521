import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SubmitFileRequest(_message.Message):
    __slots__ = ("metadata", "chunk")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    metadata: SubmitFileMetadata
    chunk: bytes
    def __init__(self, metadata: _Optional[_Union[SubmitFileMetadata, _Mapping]] = ..., chunk: _Optional[bytes] = ...) -> None: ...

class SubmitFileMetadata(_message.Message):
    __slots__ = ("file_name", "profile")
    FILE_NAME_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    file_name: str
    profile: str
    def __init__(self, file_name: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("id", "file_name", "status", "format", "profile", "folder", "source", "error_code", "error", "parent_job_id", "created_at", "completed_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    FILE_NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    FOLDER_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PARENT_JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    file_name: str
    status: str
    format: str
    profile: str
    folder: str
    source: str
    error_code: str
    error: str
    parent_job_id: str
    created_at: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., file_name: _Optional[str] = ..., status: _Optional[str] = ..., format: _Optional[str] = ..., profile: _Optional[str] = ..., folder: _Optional[str] = ..., source: _Optional[str] = ..., error_code: _Optional[str] = ..., error: _Optional[str] = ..., parent_job_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class HistoryEntry(_message.Message):
    __slots__ = ("at", "from_status", "to_status", "code", "message")
    AT_FIELD_NUMBER: _ClassVar[int]
    FROM_STATUS_FIELD_NUMBER: _ClassVar[int]
    TO_STATUS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    from_status: str
    to_status: str
    code: str
    message: str
    def __init__(self, at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., from_status: _Optional[str] = ..., to_status: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Timings(_message.Message):
    __slots__ = ("queued_at", "started_at", "signing_started_at", "completed_at", "processing_seconds")
    QUEUED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    SIGNING_STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    PROCESSING_SECONDS_FIELD_NUMBER: _ClassVar[int]
    queued_at: _timestamp_pb2.Timestamp
    started_at: _timestamp_pb2.Timestamp
    signing_started_at: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    processing_seconds: float
    def __init__(self, queued_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., signing_started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., processing_seconds: _Optional[float] = ...) -> None: ...

class JobDetail(_message.Message):
    __slots__ = ("job", "original_path", "output_path", "input_size", "input_sha256", "instance", "children", "timings", "history")
    JOB_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_PATH_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PATH_FIELD_NUMBER: _ClassVar[int]
    INPUT_SIZE_FIELD_NUMBER: _ClassVar[int]
    INPUT_SHA256_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    job: Job
    original_path: str
    output_path: str
    input_size: int
    input_sha256: str
    instance: str
    children: _containers.RepeatedScalarFieldContainer[str]
    timings: Timings
    history: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    def __init__(self, job: _Optional[_Union[Job, _Mapping]] = ..., original_path: _Optional[str] = ..., output_path: _Optional[str] = ..., input_size: _Optional[int] = ..., input_sha256: _Optional[str] = ..., instance: _Optional[str] = ..., children: _Optional[_Iterable[str]] = ..., timings: _Optional[_Union[Timings, _Mapping]] = ..., history: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ...) -> None: ...

class GetJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("status", "profile", "folder", "text", "created_from", "created_to", "limit", "cursor")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    FOLDER_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CREATED_FROM_FIELD_NUMBER: _ClassVar[int]
    CREATED_TO_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    status: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    folder: str
    text: str
    created_from: _timestamp_pb2.Timestamp
    created_to: _timestamp_pb2.Timestamp
    limit: int
    cursor: str
    def __init__(self, status: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ..., folder: _Optional[str] = ..., text: _Optional[str] = ..., created_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListJobsResponse(_message.Message):
    __slots__ = ("items", "next_cursor")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[Job]
    next_cursor: str
    def __init__(self, items: _Optional[_Iterable[_Union[Job, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class CancelJobRequest(_message.Message):
    __slots__ = ("job_id", "reason")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    reason: str
    def __init__(self, job_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RetryJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class DeleteJobRequest(_message.Message):
    __slots__ = ("job_id", "reason")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    reason: str
    def __init__(self, job_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class DeleteJobResponse(_message.Message):
    __slots__ = ("removed", "kept")
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    removed: _containers.RepeatedScalarFieldContainer[str]
    kept: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, removed: _Optional[_Iterable[str]] = ..., kept: _Optional[_Iterable[str]] = ...) -> None: ...

class PausePipelineRequest(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class ResumePipelineRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetPipelineStateRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PipelineState(_message.Message):
    __slots__ = ("paused", "reason", "changed_by", "changed_at")
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_FIELD_NUMBER: _ClassVar[int]
    CHANGED_AT_FIELD_NUMBER: _ClassVar[int]
    paused: bool
    reason: str
    changed_by: str
    changed_at: _timestamp_pb2.Timestamp
    def __init__(self, paused: _Optional[bool] = ..., reason: _Optional[str] = ..., changed_by: _Optional[str] = ..., changed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WatchJobsRequest(_message.Message):
    __slots__ = ("cursor", "job_id")
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    job_id: str
    def __init__(self, cursor: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class JobTransition(_message.Message):
    __slots__ = ("history_id", "job_id", "at", "from_status", "to_status", "code", "message", "cursor")
    HISTORY_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    FROM_STATUS_FIELD_NUMBER: _ClassVar[int]
    TO_STATUS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    history_id: int
    job_id: str
    at: _timestamp_pb2.Timestamp
    from_status: str
    to_status: str
    code: str
    message: str
    cursor: str
    def __init__(self, history_id: _Optional[int] = ..., job_id: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., from_status: _Optional[str] = ..., to_status: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., cursor: _Optional[str] = ...) -> None: ...
