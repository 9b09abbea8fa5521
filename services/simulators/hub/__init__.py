"""Streaming Hub stand-in: signed SISBAJUD execution notices over HTTP."""

from services.simulators.hub.sender import PreparedNotice, asend_notice, prepare_notice, send_notice

__all__ = ["PreparedNotice", "asend_notice", "prepare_notice", "send_notice"]
