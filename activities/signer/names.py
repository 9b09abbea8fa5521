"""Which input file names the pipeline can carry to the end: checked at every intake."""

from __future__ import annotations

from activities.signer.approvals.returns import reject_name
from activities.signer.contracts.jobs import SignatureFormat
from activities.signer.profiles import output_name

# The name limit of the filesystems we write to (ext4, XFS, NTFS, Azure Files), in bytes.
NAME_MAX_BYTES = 255
# Every artifact is written as `<name>.tmp` and then renamed into place.
TEMPORARY_SUFFIX = ".tmp"
# Controls that make a name read differently from its bytes (a "trojan source" name).
BIDI_CONTROLS = frozenset(
    [chr(c) for c in range(0x202A, 0x202F)] + [chr(c) for c in range(0x2066, 0x206A)]
    + ["\u200e", "\u200f", "\u061c"])


def longest_derived_name(file_name: str) -> str:
    """The longest name the pipeline may write for this input, whatever the profile."""
    candidates = [output_name(fmt, file_name, encrypted=True) for fmt in SignatureFormat]
    candidates.append(reject_name(file_name, encrypted=True))
    return max(candidates, key=lambda name: len(name.encode())) + TEMPORARY_SUFFIX


def name_problem(file_name: str) -> str | None:
    """Why this name can't become a job, or None when it can."""
    if any(char in BIDI_CONTROLS for char in file_name):
        return (f"The file name {file_name!r} contains bidirectional control characters, "
                "which make it read differently from what it is; rename the file.")
    added = len(longest_derived_name(file_name).encode()) - len(file_name.encode())
    if len(file_name.encode()) + added > NAME_MAX_BYTES:
        return (f"The file name is {len(file_name.encode())} bytes; its output name adds up "
                f"to {added} bytes (.signed, .p7m, .enc, {TEMPORARY_SUFFIX}) and would pass the "
                f"{NAME_MAX_BYTES}-byte limit. Use a name of at most "
                f"{NAME_MAX_BYTES - added} bytes (UTF-8).")
    return None
