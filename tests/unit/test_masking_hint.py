"""A log line with no secret-looking word skips the costly pair pattern, masking the same."""

from __future__ import annotations

import pytest

from shared.logs import masking
from shared.logs.masking import SecretMasker

QUEUED = ('2026-12-01T21:43:11.9+00:00 [INF] Queued job 20a06fbc-2be4-48be-9734-aabb59f1e622 '
          'for /tmp/esteira-bench-8rivhkio/data/storage/input/inbox/bench-00122.pdf  '
          '{Process: "watcher", JobId: "20a06fbc-2be4-48be-9734-aabb59f1e622"}')


class _Unused:
    def sub(self, *_args):
        raise AssertionError("the pair pattern ran on a line without a secret-looking word")


def test_a_line_without_a_secret_word_never_runs_the_pair_pattern(monkeypatch):
    monkeypatch.setattr(masking, "_PAIR", _Unused())
    assert SecretMasker(["s3cr3t-value"]).mask(QUEUED) == QUEUED


@pytest.mark.parametrize("line", [
    QUEUED, "password=hunter2", "X-API-Key: abc123", '{"pin": "1234"}', "pwd=Abc!",
    "Authorization: Bearer abcdefgh", "proxy-authorization: Basic Zm9vOmJhcg==",
    "client_secret=abc&grant=x", "hmac-secret: K9x", "my-api_key-v2=abc", "TOKEN: Xyz1",
    "Whsec_signing=abc", "mapping ping spin=3", "No webhook secret: set ESTEIRA_X",
])
def test_masking_is_what_the_pair_pattern_alone_gives(line):
    expected = masking._BEARER.sub(lambda m: f"{m[1]} {masking.MASK}",
                                   masking._PAIR.sub(masking._mask_pair, line))
    assert SecretMasker().mask(line) == masking._WHSEC.sub(masking.MASK, expected)
