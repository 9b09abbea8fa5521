"""Streaming Hub stand-in: signed SISBAJUD execution notices over HTTP."""

from services.simulators.hub.redelivery import RETRY_SCHEDULE, Delivery, deliver
from services.simulators.hub.sender import PreparedNotice, asend_notice, prepare_notice, send_notice

__all__ = ["RETRY_SCHEDULE", "Delivery", "PreparedNotice", "asend_notice", "deliver",
           "prepare_notice", "send_notice"]
