"""Browser hardening headers on every response: no framing, no sniffing, a strict CSP."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Everything the dashboard loads is its own: vendored htmx, its CSS, same-origin fetches and
# the pickup board's event stream; the approver's page previews the held file from a blob: it
# fetched with its bearer token. No inline script or style, no plugin, no framing.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; "
                           "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; "
                           "base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
# The OpenAPI page (Swagger UI) runs an inline script from FastAPI; it keeps the other two.
_CSP_EXEMPT = ("/api/docs",)


class SecurityHeadersMiddleware:
    """Adds `X-Frame-Options`, `X-Content-Type-Options` and the CSP unless already set."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with_csp = not str(scope.get("path", "")).startswith(_CSP_EXEMPT)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                wanted = [(b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"),
                          (b"referrer-policy", b"same-origin")]
                if with_csp:
                    wanted.append((b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
                headers += [(k, v) for k, v in wanted if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
