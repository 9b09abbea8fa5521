"""Where each part of a backup lives on this host, read from the settings.

An archive names its files by what they are, not where they were: `store/esteira.db`,
`temporal/temporal.db`, `payload-keys/…`, `storage/…`, `inputs/<folder>/…`, `data/…` (the
rest of the data directory) and `external/<absolute path>` (files a signing profile names
outside all of these). A restore puts each one where this host's settings say it belongs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sqlalchemy.engine import make_url

from shared.db.engine import describe_store, is_sqlite
from shared.private_files import SQLITE_SIDE_FILES
from shared.settings import Settings

STORE = "store/esteira.db"
TEMPORAL = "temporal/temporal.db"
PAYLOAD_KEYS = "payload-keys"
STORAGE = "storage"
INPUTS = "inputs"
DATA = "data"
EXTERNAL = "external"
# Under the data directory but not copied as files: the supervisor's lock and metrics, the dev
# SMTP sink's mail (the outside world's inbox), the logs, and the default places of the two
# SQLite stores (copied through SQLite's backup API as `store/` and `temporal/`; a file left
# there by another mode is not this host's store).
SKIPPED_DATA_DIRS = ("run", "mail", "logs", "db", "temporal")
# Written 0600 whatever mode the archive recorded: stores, keys, secrets, private keys.
PRIVATE_PREFIXES = (STORE, TEMPORAL, PAYLOAD_KEYS, f"{DATA}/keys/", f"{DATA}/api-key",
                    f"{DATA}/hub-webhook-secret")
PRIVATE_SUFFIXES = (".key", ".password", ".pfx", ".p12", ".db")


class UnknownMemberError(ValueError):
    """An archive member this host has no place for."""


@dataclass(frozen=True)
class Layout:
    """This host's places for each part of a backup."""

    data_dir: Path
    store: Path | None
    store_label: str
    temporal: Path | None
    temporal_label: str
    payload_key_file: Path
    storage_root: Path
    inputs: tuple[tuple[str, Path], ...]
    log_dir: Path

    @property
    def store_kind(self) -> str:
        """`sqlite` or `postgresql`."""
        return "sqlite" if self.store is not None else "postgresql"

    @property
    def temporal_kind(self) -> str:
        """`embedded` (its SQLite file is ours to keep) or `external`."""
        return "embedded" if self.temporal is not None else "external"

    def roots(self) -> list[tuple[str, Path]]:
        """Folders walked for files, each under its archive prefix, most specific first."""
        return [(STORAGE, self.storage_root),
                *((f"{INPUTS}/{name}", path) for name, path in self.inputs),
                (DATA, self.data_dir)]

    def walks(self, path: Path) -> bool:
        """Whether a backup's walk would reach `path` (an archive there would hold itself)."""
        return any(_within(path, root) for _, root in self.roots())

    def skipped(self, path: Path) -> bool:
        """Paths the data walk leaves out: stores, other roots, runtime state, logs."""
        if path in self.sqlite_files() or path == self.payload_key_file:
            return True
        if _within(path, self.log_dir):
            return True
        return any(_within(path, self.data_dir / name) for name in SKIPPED_DATA_DIRS)

    def sqlite_files(self) -> set[Path]:
        """The SQLite stores and their side files (copied by the backup API, never as files)."""
        found: set[Path] = set()
        for database in (self.store, self.temporal):
            if database is not None:
                found |= {database, *(Path(f"{database}{s}") for s in SQLITE_SIDE_FILES)}
        return found

    def target(self, name: str) -> Path:
        """Where the archive member `name` goes on this host."""
        parts = PurePosixPath(name).parts
        if name == STORE:
            if self.store is None:
                raise UnknownMemberError("the archive holds a SQLite operational store but "
                                         f"this host's store is {self.store_label}")
            return self.store
        if name == TEMPORAL:
            if self.temporal is None:
                raise UnknownMemberError("the archive holds an embedded Temporal database but "
                                         f"this host uses {self.temporal_label}")
            return self.temporal
        if len(parts) == 2 and parts[0] == PAYLOAD_KEYS:
            return self.payload_key_file
        if parts[0] == EXTERNAL and len(parts) > 1:
            return Path("/", *parts[1:])
        if parts[0] == INPUTS and len(parts) > 2:
            folders = dict(self.inputs)
            if parts[1] not in folders:
                raise UnknownMemberError(f"input folder {parts[1]!r} is not configured here "
                                         "(ESTEIRA_STORAGE__INPUTS)")
            return folders[parts[1]].joinpath(*parts[2:])
        if parts[0] == STORAGE and len(parts) > 1:
            return self.storage_root.joinpath(*parts[1:])
        if parts[0] == DATA and len(parts) > 1:
            return self.data_dir.joinpath(*parts[1:])
        raise UnknownMemberError(f"no place for {name!r}")


def layout_of(settings: Settings) -> Layout:
    """Read this host's layout from its settings."""
    data_dir = settings.data_dir.resolve()
    url = settings.sqlalchemy_url
    store = Path(make_url(url).database or "").resolve() if is_sqlite(url) else None
    storage = settings.storage_root
    # Folders with their own path outside the storage tree; the others are inside it.
    inputs = tuple((folder.name, settings.input_folder_path(folder))
                   for folder in settings.effective_inputs
                   if folder.path is not None
                   and not _within(settings.input_folder_path(folder), storage))
    temporal = data_dir / "temporal" / "temporal.db"
    embedded = temporal_mode(settings) != "external"
    return Layout(
        data_dir=data_dir, store=store, store_label=describe_store(url),
        temporal=temporal if embedded else None,
        temporal_label=("embedded Temporal" if embedded
                        else f"the Temporal cluster at {settings.temporal_address}"),
        payload_key_file=settings.payload_key_file, storage_root=storage, inputs=inputs,
        log_dir=settings.log_dir)


def temporal_mode(settings: Settings) -> str:
    """`embedded` or `external`, as `esteira dev` would choose (unset: embedded)."""
    return settings.temporal_server.mode or "embedded"


def is_private(name: str) -> bool:
    """Members restored owner-only (0600) whatever mode they were archived with."""
    return name.startswith(PRIVATE_PREFIXES) or name.endswith(PRIVATE_SUFFIXES)


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
