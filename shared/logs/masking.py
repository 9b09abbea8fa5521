"""Secret masking for every log line: configured secret values and secret-looking pairs."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, SecretStr

MASK = "***"

# Pairs such as `password=hunter2`, `"pin": "1234"`, `X-API-Key: abc`, `Bearer abc`: the value
# is a secret whatever its source, so lines from libraries and exceptions are covered too.
# A bare word, a colon, a space and a lower-case word is prose ("No webhook secret: set
# ESTEIRA_…"), not a pair; `password: hunter2` (a digit, a capital, a symbol) still is.
_KEY = r"""[\w-]*?(?:api[_-]?key|x-api-key|password|passwd|pwd|(?<![a-z])pin(?![a-z])
        |token|secret|hmac[_-]?secret|client[_-]?secret|authorization|whsec)[\w-]*"""
_PAIR = re.compile(
    rf"""(?ix)
    (?:
        (?P<key>{_KEY})(?P<sep>\s*=\s*["']?|:(?!\s)["']?|:\s*["'])
      | (?P<qkey>["']{_KEY}["'])(?P<qsep>\s*[:=]\s*["']?)
      | (?P<hkey>(?:[a-z]+-)+{_KEY}|authorization|proxy-authorization)(?P<hsep>:\s*)
      | (?P<skey>{_KEY})(?P<ssep>:\s+)(?!(?-i:[a-z]+)(?:[\s"',;&}}]|$))
    )
    (?P<value>(?:bearer\s+|basic\s+)?[^\s"',;&}}]+)
    """
)
# `pin` only as a whole word part, so `mapping` or `ping` are not taken for secrets.
_SECRET_WORD = re.compile(
    r"(?i)api[_-]?key|password|passwd|pwd|(?<![a-z])pin(?![a-z])|token|secret|whsec"
)
# Every key `_PAIR` knows contains one of these words: a line without any can't hold a pair,
# and skips `_PAIR`, whose backtracking costs milliseconds on a line of long hyphenated words.
_PAIR_HINT = re.compile(r"(?i)api[_-]?key|password|passwd|pwd|pin|token|secret|authorization"
                        r"|whsec")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}")
_WHSEC = re.compile(r"\bwhsec_[A-Za-z0-9+/=]{8,}")
_MIN_SECRET_LENGTH = 4


class SecretMasker:
    """Replaces known secret values and secret-looking key/value pairs with `***`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Register more secret values (short ones would mask ordinary words, so they're kept
        only via the key/value rule)."""
        self._secrets |= {s for s in secrets if s and len(s) >= _MIN_SECRET_LENGTH}
        ordered = sorted(self._secrets, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def mask(self, text: str) -> str:
        """Return `text` with every secret replaced."""
        if self._pattern is not None:
            text = self._pattern.sub(MASK, text)
        if _PAIR_HINT.search(text):
            text = _PAIR.sub(_mask_pair, text)
        text = _BEARER.sub(lambda m: f"{m[1]} {MASK}", text)
        return _WHSEC.sub(MASK, text)


def _mask_pair(match: re.Match[str]) -> str:
    key, sep = next((match[k], match[s]) for k, s in (("key", "sep"), ("qkey", "qsep"),
                                                      ("hkey", "hsep"), ("skey", "ssep"))
                    if match[k])
    return f"{key}{sep}{MASK}"


def secret_values(model: BaseModel) -> list[str]:
    """Every `SecretStr` value in a settings tree, plus values under secret-looking keys."""
    found: list[str] = []
    _collect(model, found, secretish=False)
    return found


def _collect(value: object, found: list[str], *, secretish: bool) -> None:
    if isinstance(value, SecretStr):
        found.append(value.get_secret_value())
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            _collect(getattr(value, name), found, secretish=is_secret_key(name))
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect(item, found, secretish=is_secret_key(str(key)))
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, found, secretish=secretish)
    elif secretish and isinstance(value, str):
        found.append(value)


def is_secret_key(name: str) -> bool:
    """Whether a key's name says its value is a secret (`ApiKey`, `password`, `token`...)."""
    return bool(_SECRET_WORD.search(name))
