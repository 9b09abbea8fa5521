"""Ask the kernel to signal this process when its parent dies (Linux `PR_SET_PDEATHSIG`)."""

from __future__ import annotations

import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have `sig` delivered to this process when the thread that started it exits."""
    # The kernel ties this to the parent *thread*: start children from a long-lived thread.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, sig)


def exit_with(parent: int) -> None:
    """Process-pool initializer: be killed when `parent` dies, even if it already has."""
    die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
