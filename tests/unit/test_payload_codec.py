"""The payload codec: AES-GCM by key id, rotation, pass-through, keys from settings."""

from __future__ import annotations

import base64
import logging
import os

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter

from shared.logs import configure_logging
from shared.payload_codec import (
    ENCODING,
    KEY_ID_FIELD,
    EncryptionCodec,
    PayloadDecryptError,
    PayloadKeyError,
    ensure_key_file,
    parse_keys,
)
from shared.settings import ConfigurationError, Settings
from shared.temporal import data_converter, payload_keys

OLD = base64.b64encode(b"o" * 32).decode()
NEW = base64.b64encode(b"n" * 32).decode()
CPF = b'{"document":"12345678900","amount":"4321.87"}'


def _payload(data: bytes = CPF) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=data)


async def test_encode_hides_the_payload_and_decode_restores_it_whole():
    codec = EncryptionCodec(parse_keys(f"k1:{OLD}", source="test"))
    [sealed] = await codec.encode([_payload()])
    assert sealed.metadata["encoding"] == ENCODING
    assert sealed.metadata[KEY_ID_FIELD] == b"k1"
    assert b"12345678900" not in sealed.SerializeToString()
    assert b"json/plain" not in sealed.SerializeToString()  # the inner metadata is sealed too
    assert await codec.decode([sealed]) == [_payload()]


async def test_same_payload_twice_is_two_ciphertexts():
    codec = EncryptionCodec(parse_keys(f"k1:{OLD}", source="test"))
    first, second = await codec.encode([_payload(), _payload()])
    assert first.data != second.data


async def test_rotation_the_newest_encrypts_and_the_old_still_decrypts():
    [old_sealed] = await EncryptionCodec(parse_keys(f"k1:{OLD}", source="t")).encode([_payload()])
    rotated = EncryptionCodec(parse_keys(f"k1:{OLD},k2:{NEW}", source="t"))
    [new_sealed] = await rotated.encode([_payload()])
    assert new_sealed.metadata[KEY_ID_FIELD] == b"k2"
    assert await rotated.decode([old_sealed, new_sealed]) == [_payload(), _payload()]
    # Once k1 is dropped, what it sealed can't be read: the error names the key.
    with pytest.raises(PayloadDecryptError, match="k1"):
        await EncryptionCodec(parse_keys(f"k2:{NEW}", source="t")).decode([old_sealed])


async def test_unencrypted_payloads_pass_through_on_decode():
    """Histories written before encryption was on still replay."""
    codec = EncryptionCodec(parse_keys(f"k1:{OLD}", source="t"))
    plain = _payload()
    assert await codec.decode([plain]) == [plain]


async def test_tampered_or_relabelled_payloads_are_refused():
    codec = EncryptionCodec(parse_keys(f"k1:{OLD},k2:{NEW}", source="t"))
    [sealed] = await codec.encode([_payload()])
    flipped = Payload()
    flipped.CopyFrom(sealed)
    flipped.data = sealed.data[:-1] + bytes([sealed.data[-1] ^ 1])
    with pytest.raises(PayloadDecryptError, match="authentication"):
        await codec.decode([flipped])
    relabelled = Payload()
    relabelled.CopyFrom(sealed)
    relabelled.metadata[KEY_ID_FIELD] = b"k1"  # sealed with k2; k1 is a different key
    with pytest.raises(PayloadDecryptError, match="authentication"):
        await codec.decode([relabelled])


@pytest.mark.parametrize(("text", "message"), [
    ("", "no key"),
    (f"{OLD}", "id:base64key"),
    ("k1:not base64!", "not base64"),
    (f"k1:{base64.b64encode(b'x' * 16).decode()}", "16 bytes"),
    (f"k1:{OLD},k1:{NEW}", "twice"),
])
def test_bad_key_settings_are_refused_by_name(text, message):
    with pytest.raises(PayloadKeyError, match=message):
        parse_keys(text, source="ESTEIRA_PAYLOAD_CODEC__KEYS")


def test_production_without_a_key_refuses_to_start(tmp_path):
    settings = Settings(environment="Production", data_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="ESTEIRA_PAYLOAD_CODEC__KEYS is required"):
        data_converter(settings)
    assert not (tmp_path / "keys").exists()  # nothing generated outside Development


def test_production_with_keys_encrypts_with_the_last(tmp_path):
    settings = Settings(environment="Production", data_dir=tmp_path,
                        payload_codec={"keys": f"k1:{OLD}, k2:{NEW}"})
    keys = payload_keys(settings)
    assert keys is not None and keys.current == "k2" and set(keys.keys) == {"k1", "k2"}
    assert data_converter(settings).payload_codec is not None


def test_turning_encryption_off_is_explicit(tmp_path):
    settings = Settings(environment="Production", data_dir=tmp_path,
                        payload_codec={"enabled": False})
    assert data_converter(settings) is pydantic_data_converter


def test_a_bad_key_is_a_configuration_error(tmp_path):
    settings = Settings(data_dir=tmp_path, payload_codec={"keys": "k1:short"})
    with pytest.raises(ConfigurationError, match="ESTEIRA_PAYLOAD_CODEC__KEYS"):
        data_converter(settings)


def test_development_generates_one_private_key_file_shared_by_every_process(tmp_path):
    settings = Settings(data_dir=tmp_path)
    first = payload_keys(settings)
    path = settings.payload_key_file
    assert path == tmp_path.resolve() / "keys" / "temporal-payload.keys"
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert payload_keys(settings) == first  # read back, not regenerated
    assert not ensure_key_file(path)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no draft left behind


def test_keys_from_the_file_are_masked_in_logs(tmp_path, capsys):
    settings = Settings(data_dir=tmp_path, logging={"to_file": False})
    keys = payload_keys(settings)
    assert keys is not None
    [secret] = keys.secrets()
    configure_logging(settings, process="test")
    logging.getLogger("esteira.test").warning("loaded key %s", secret)
    err = capsys.readouterr().err
    assert "loaded key ***" in err and secret not in err
