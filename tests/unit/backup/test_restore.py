"""`esteira restore`: checked in full before a byte lands, never onto a running system."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from services.backup import create
from services.backup.archive import MANIFEST, CorruptArchiveError
from services.backup.layout import STORE
from services.backup.restore import RestoreRefusedError
from services.cli import main
from services.dev.lock import lock_data_dir
from shared.settings import Settings
from tests.unit.backup.support import (
    FILES,
    RUNTIME,
    backup_to,
    count_rows,
    fill_sqlite,
    make_host,
    mode,
    restore_from,
    rewrite,
    sha256,
)

KEPT = [name for name in FILES if not name.startswith(RUNTIME)]


@pytest.fixture
def backed_up(tmp_path):
    """A host, its archive, and the host's data directory wiped."""
    settings = make_host(tmp_path)
    archive = tmp_path / "backup.tar"
    backup_to(settings, archive)
    sums = {name: sha256(settings.data_dir / name) for name in KEPT}
    shutil.rmtree(settings.data_dir)
    return settings, archive, sums


def _nothing_restored(settings) -> bool:
    data = settings.data_dir
    return not any(p.is_file() for p in data.rglob("*") if "run" not in p.parts)


def test_a_wiped_host_gets_every_file_back_with_its_mode(backed_up):
    settings, archive, sums = backed_up
    done = restore_from(settings, archive)
    data = settings.data_dir
    assert {name: sha256(data / name) for name in KEPT} == sums
    assert count_rows(data / "db" / "esteira.db") == 10
    assert count_rows(data / "temporal" / "temporal.db") == 10
    for name in KEPT:
        assert mode(data / name) == FILES[name], name
    for store in ("db/esteira.db", "temporal/temporal.db"):
        assert mode(data / store) == 0o600
    assert len(done.targets) == len(KEPT) + 2
    assert not any((data / name).exists() for name in FILES if name.startswith(("logs/",
                                                                                "mail/")))


@pytest.mark.skipif(os.geteuid() != 0, reason="only root restores files for another user")
def test_run_as_root_the_files_belong_to_the_owner_of_the_folder_above(backed_up, tmp_path):
    settings, archive, _ = backed_up
    service_user = (65534, 65534)  # nobody: the service's account on a real host
    os.chown(settings.data_dir.parent, *service_user)
    restore_from(settings, archive)
    made = [settings.data_dir, *settings.data_dir.rglob("*")]
    assert len(made) > len(KEPT)
    for path in made:
        assert (path.stat().st_uid, path.stat().st_gid) == service_user, path


def test_keys_and_stores_are_owner_only_whatever_mode_the_archive_recorded(backed_up,
                                                                          tmp_path):
    settings, archive, _ = backed_up
    wide = tmp_path / "wide.tar"

    def widen(name, data):
        if name == MANIFEST:
            manifest = json.loads(data)
            for entry in manifest["files"]:
                entry["mode"] = "0644"
            return name, json.dumps(manifest).encode()
        return name, data

    rewrite(archive, wide, widen)
    restore_from(settings, wide)
    data = settings.data_dir
    for private in ("keys/bsenc.salt", "keys/temporal-payload.keys", "api-key",
                    "hub-webhook-secret", "pki/signer.pfx", "pki/signer.password",
                    "db/esteira.db", "temporal/temporal.db"):
        assert mode(data / private) == 0o600, private
    assert mode(data / "pki" / "ca.pem") == 0o644


@pytest.mark.parametrize(("damage", "message"), [
    (lambda name, data: (name, data[:-1] + bytes([data[-1] ^ 1])) if name == STORE
     else (name, data), f"{STORE} fails its SHA-256 check"),
    (lambda name, data: (name, data + b"x") if name == "data/api-key" else (name, data),
     "data/api-key has"),
    (lambda name, data: None if name == "data/pki/ca.pem" else (name, data),
     "data/pki/ca.pem is listed in the manifest but missing"),
    (lambda name, data: ("data/planted", data) if name == "data/pki/ca.pem" else (name, data),
     "data/planted is not in the manifest"),
    (lambda name, data: None if name == MANIFEST else (name, data), "no manifest.json"),
    (lambda name, data: ("data/../../escape", data) if name == "data/api-key"
     else (name, data), "unsafe member name"),
    (lambda name, data: (name, b"{not json") if name == MANIFEST else (name, data),
     "unreadable manifest"),
    (lambda name, data: (name, json.dumps({**json.loads(data), "format": 2}).encode())
     if name == MANIFEST else (name, data), "manifest format 2"),
], ids=["flipped-bit", "longer", "missing", "extra", "no-manifest", "traversal", "bad-json",
        "newer-format"])
def test_a_damaged_archive_is_refused_before_anything_is_written(backed_up, tmp_path, damage,
                                                                 message):
    settings, archive, _ = backed_up
    damaged = tmp_path / "damaged.tar"
    rewrite(archive, damaged, damage)
    with pytest.raises(CorruptArchiveError, match=message.replace(".", r"\.")):
        restore_from(settings, damaged)
    assert _nothing_restored(settings)
    assert not list((settings.data_dir / "run").glob("restore-*")), "no staging left behind"


@pytest.mark.parametrize("cut", [0.5, 0.99])
def test_a_truncated_compressed_archive_is_refused(tmp_path, cut):
    settings = make_host(tmp_path)
    archive = tmp_path / "backup.tar.gz"
    backup_to(settings, archive, compress=True)
    shutil.rmtree(settings.data_dir)
    raw = archive.read_bytes()
    archive.write_bytes(raw[:int(len(raw) * cut)])
    with pytest.raises(CorruptArchiveError, match="not a readable archive"):
        restore_from(settings, archive)
    assert _nothing_restored(settings)


def test_the_command_refuses_a_corrupt_archive_in_one_line(backed_up, tmp_path, capsys,
                                                          monkeypatch):
    settings, archive, _ = backed_up
    raw = bytearray(archive.read_bytes())
    offset = raw.index(b"keys/bsenc.salt\n")  # inside the salt's bytes, not a header
    raw[offset] ^= 0x20
    archive.write_bytes(bytes(raw))
    monkeypatch.setenv("ESTEIRA_DATA_DIR", str(settings.data_dir))
    assert main(["restore", str(archive)]) == 1
    error = capsys.readouterr().err.strip()
    assert error == (f"esteira restore: {archive}: corrupt or mismatching archive: "
                     "data/keys/bsenc.salt fails its SHA-256 check")


def test_a_running_esteira_dev_is_never_overwritten(backed_up):
    settings, archive, _ = backed_up
    lock = lock_data_dir(settings.data_dir, holder="esteira dev")
    try:
        with pytest.raises(RestoreRefusedError, match=r"Esteira is running on .*esteira dev"):
            restore_from(settings, archive, force=True)
    finally:
        lock.close()
    assert _nothing_restored(settings)


def test_a_process_holding_the_store_open_stops_the_restore(backed_up):
    settings, archive, _ = backed_up
    store = settings.data_dir / "db" / "esteira.db"
    fill_sqlite(store, rows=1)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); "
        "c.execute('select 1 from t').fetchall(); print('open', flush=True); time.sleep(60)"),
        str(store)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(RestoreRefusedError,
                           match=rf"process {holder.pid} \(python.*\) has {store}"):
            restore_from(settings, archive, force=True)
    finally:
        holder.kill()
        holder.wait()
    assert count_rows(store) == 1


def test_existing_files_need_force_and_force_drops_a_stale_write_ahead_log(backed_up):
    settings, archive, _ = backed_up
    store = settings.data_dir / "db" / "esteira.db"
    fill_sqlite(store, rows=3)
    stale = Path(f"{store}-wal")
    stale.write_bytes(b"not this store's log")
    with pytest.raises(RestoreRefusedError, match=r"already exists .* pass --force"):
        restore_from(settings, archive)
    assert count_rows(store) == 3
    restore_from(settings, archive, force=True)
    assert not stale.exists()
    assert count_rows(store) == 10


def test_an_archive_of_another_deployment_shape_is_refused(backed_up):
    settings, archive, _ = backed_up
    other = Settings(data_dir=settings.data_dir,
                     database_url="postgresql://esteira@db.example/esteira")
    with pytest.raises(RestoreRefusedError, match="operational store was sqlite, this host's is "
                                                  "PostgreSQL"):
        restore_from(other, archive)
    external = Settings(data_dir=settings.data_dir, temporal_server={"mode": "external"},
                        temporal={"address": "temporal.example:7233"})
    with pytest.raises(RestoreRefusedError, match="Temporal was embedded"):
        restore_from(external, archive)
    assert _nothing_restored(settings)


def test_profile_files_outside_the_data_directory_go_back_where_they_were(tmp_path,
                                                                          monkeypatch):
    settings = make_host(tmp_path)
    outside = tmp_path / "etc" / "certs" / "real.pfx"
    outside.parent.mkdir(parents=True)
    outside.write_bytes(b"pfx")
    outside.chmod(0o600)

    async def named_by_profiles(_url):
        return {outside}

    # The store of this small host has no profile table; the profile's file is named here.
    monkeypatch.setattr(create, "_named_by_profiles", named_by_profiles)
    archive = tmp_path / "backup.tar"
    backup_to(settings, archive)
    shutil.rmtree(settings.data_dir)
    shutil.rmtree(outside.parent)
    restore_from(settings, archive)
    assert outside.read_bytes() == b"pfx" and mode(outside) == 0o600
    assert (settings.data_dir / "db" / "esteira.db").is_file()


def test_the_command_reports_what_it_restored_and_what_it_could_not(backed_up, capsys,
                                                                   monkeypatch):
    settings, archive, _ = backed_up
    monkeypatch.setenv("ESTEIRA_DATA_DIR", str(settings.data_dir))
    assert main(["restore", str(archive)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Restored {len(KEPT) + 2} files from {archive}")
    assert "Not in the archive" in out and "configuration" in out
    assert (settings.data_dir / "temporal" / "temporal.db").is_file()
