from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class RequeueNoticeRequest(_message.Message):
    __slots__ = ("notice_id", "reason")
    NOTICE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    notice_id: int
    reason: str
    def __init__(self, notice_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class RequeueResultRequest(_message.Message):
    __slots__ = ("result_id", "reason")
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    result_id: int
    reason: str
    def __init__(self, result_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class RequeueOrderRequest(_message.Message):
    __slots__ = ("order_id", "reason")
    ORDER_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    order_id: str
    reason: str
    def __init__(self, order_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class AcknowledgeAlarmRequest(_message.Message):
    __slots__ = ("alarm_id", "reason")
    ALARM_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    alarm_id: int
    reason: str
    def __init__(self, alarm_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class AcknowledgeOrphanRequest(_message.Message):
    __slots__ = ("operation_id", "reason")
    OPERATION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    operation_id: str
    reason: str
    def __init__(self, operation_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("actor", "state", "notice_id", "idempotency_key")
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    NOTICE_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    actor: str
    state: str
    notice_id: int
    idempotency_key: str
    def __init__(self, actor: _Optional[str] = ..., state: _Optional[str] = ..., notice_id: _Optional[int] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ResolveDecisionRequest(_message.Message):
    __slots__ = ("decision_id", "reason", "effect", "reason_code", "executed_amount", "transaction_id")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    REASON_CODE_FIELD_NUMBER: _ClassVar[int]
    EXECUTED_AMOUNT_FIELD_NUMBER: _ClassVar[int]
    TRANSACTION_ID_FIELD_NUMBER: _ClassVar[int]
    decision_id: int
    reason: str
    effect: str
    reason_code: str
    executed_amount: str
    transaction_id: str
    def __init__(self, decision_id: _Optional[int] = ..., reason: _Optional[str] = ..., effect: _Optional[str] = ..., reason_code: _Optional[str] = ..., executed_amount: _Optional[str] = ..., transaction_id: _Optional[str] = ...) -> None: ...

class ResolveDecisionReply(_message.Message):
    __slots__ = ("status", "order_id", "revision", "result_key", "actor")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ORDER_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    RESULT_KEY_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    status: str
    order_id: str
    revision: int
    result_key: str
    actor: str
    def __init__(self, status: _Optional[str] = ..., order_id: _Optional[str] = ..., revision: _Optional[int] = ..., result_key: _Optional[str] = ..., actor: _Optional[str] = ...) -> None: ...
