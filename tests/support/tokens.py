"""Token answers for tests that mock a token endpoint: Lerian's or RFC 6749's shape by path."""

from __future__ import annotations

import httpx

from activities.sisbajud.m2m import TOKEN_PATHS


def is_token_request(request: httpx.Request) -> bool:
    """A request to either mode's token path."""
    return request.url.path in TOKEN_PATHS.values()


def token_answer(request: httpx.Request, token: str = "tok", expires_in: int = 600,
                 **extra: object) -> httpx.Response:
    """A 200 with `token` in the shape the path's mode answers (`accessToken` for Lerian)."""
    if request.url.path == TOKEN_PATHS["lerian"]:
        return httpx.Response(200, json={"accessToken": token, "tokenType": "Bearer",
                                         "expiresIn": expires_in, "refreshToken": ""})
    return httpx.Response(200, json={"access_token": token, "token_type": "Bearer",
                                     "expires_in": expires_in, **extra})
