"""Promotion to output/: never over someone else's file, repeatable after a crash."""

import os

import pytest

from activities.signer.contracts.jobs import SignerErrorCode
from activities.signer.storage import StorageError, StorageTree


@pytest.fixture
def tree(tmp_path):
    storage = StorageTree(tmp_path)
    storage.ensure()
    return storage


def _artifact(tree: StorageTree, data: bytes):
    staging = tree.staging_dir("job-1")
    staging.mkdir(parents=True, exist_ok=True)
    artifact = staging / "doc.signed.pdf"
    artifact.write_bytes(data)
    return artifact


def test_an_existing_different_file_is_never_replaced(tree):
    (tree.output / "doc.signed.pdf").write_bytes(b"the operator's file")
    artifact = _artifact(tree, b"signed bytes")
    with pytest.raises(StorageError) as refused:
        tree.promote("job-1", artifact, "doc.signed.pdf")
    assert refused.value.code == SignerErrorCode.OUTPUT_EXISTS
    assert (tree.output / "doc.signed.pdf").read_bytes() == b"the operator's file"
    assert artifact.read_bytes() == b"signed bytes"


def test_a_retry_after_the_link_and_before_the_commit_completes(tree):
    artifact = _artifact(tree, b"signed bytes")
    os.link(artifact, tree.output / "doc.signed.pdf")  # the attempt that died right here
    final = tree.promote("job-1", artifact, "doc.signed.pdf")
    assert final.read_bytes() == b"signed bytes" and not artifact.exists()


def test_the_same_bytes_produced_again_count_as_promoted(tree):
    (tree.output / "doc.signed.pdf").write_bytes(b"signed bytes")
    artifact = _artifact(tree, b"signed bytes")
    final = tree.promote("job-1", artifact, "doc.signed.pdf")
    assert final.read_bytes() == b"signed bytes" and not artifact.exists()
