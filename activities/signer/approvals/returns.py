"""A rejected file goes back to `output/` as `<name>.reject<ext>`, never over another file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from activities.signer.contracts.jobs import SignerErrorCode
from activities.signer.crypto.bsenc import BsencCipher
from activities.signer.storage import Fingerprint, InputCheck, StorageError, StorageTree


def reject_name(file_name: str, *, encrypted: bool) -> str:
    """`folha.rem` -> `folha.reject.rem` (plus `.enc` when the profile encrypts)."""
    path = Path(file_name)
    name = f"{path.stem}.reject{path.suffix}"
    return name + ".enc" if encrypted else name


@dataclass(frozen=True)
class RejectReturn:
    """Where the rejected file went: `output/` (input released) or `error/` (input kept)."""

    name: str
    returned: Path | None
    error_dir: Path | None
    input_check: InputCheck | None = None

    def describe(self) -> str:
        """One sentence for the job's history."""
        if self.returned is not None:
            kept = "" if self.input_check is None or self.input_check.deleted \
                or self.input_check.gone else f" Input kept: {self.input_check.reason}."
            return f"Rejected file returned to {self.returned}.{kept}"
        return (f"{self.name} already exists in output/; nothing "
                f"overwritten: staged copy moved to {self.error_dir}, input left in place.")


def return_rejected(storage: StorageTree, job_id: str, staged: Path, source: Path,
                    fingerprint: Fingerprint, *, encryption_key: bytes | None) -> RejectReturn:
    """Promote the staged copy as `.reject`; on a taken name, park it in `error/<job>/`."""
    name = reject_name(source.name, encrypted=encryption_key is not None)
    artifact = staged.with_name(name)
    if encryption_key is not None:
        artifact.write_bytes(bytes(BsencCipher(encryption_key).encrypt(staged.read_bytes())))
    else:
        os.chmod(staged, 0o644)  # the hold made it read-only; the returned file is a normal one
        os.replace(staged, artifact)
    try:
        final = storage.promote(job_id, artifact, name)
    except StorageError as exc:
        if exc.code != SignerErrorCode.OUTPUT_EXISTS:
            raise
        if encryption_key is None:
            os.replace(artifact, staged)
        else:
            artifact.unlink(missing_ok=True)
        moved = storage.move_to_error(job_id)
        return RejectReturn(name, None, moved)
    check = storage.delete_input_if_unchanged(source, fingerprint)
    storage.remove_staging(job_id)
    return RejectReturn(name, final, None, check)
