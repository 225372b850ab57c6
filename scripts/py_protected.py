#!/usr/bin/env python3
"""Serve a small MCP server protected by the official Python SDK's own auth support.

Usage: py_protected.py PORT ISSUER [--lax] [--uses N] [--static TOKEN]

The SDK's resource-server side (`mcp.server.auth`): `AuthSettings` with this server's URL as
`resource_server_url` (so it serves RFC 9728 metadata and answers 401/403 with RFC 6750 error
bodies and a Bearer challenge), and a `TokenVerifier` that verifies the authorization server's
JWT access tokens (signature by the issuer's JWKS, `iss`, `exp`) and reports their `aud` as the
token's resource, which the SDK's bearer middleware checks against this server
(`validate_token_resource`). `--lax` is the broken variant: the audience is checked neither by
the verifier nor by the middleware (a token minted for another resource is accepted), the
verifier ignores `exp` and reports no expiry (an expired token is accepted), and a token in the
`access_token` query parameter is taken as the bearer token. `--front-400` puts a layer in front
of the token check that answers a token minted for another resource, or expired, with HTTP 400
and JSON-RPC error -32020 (as a proxy that drops headers makes the server do), so no
authorization layer answers for those tokens. `--front-401` puts a layer in front that answers
a bearer token that is not a JWT (a forged one) with a bare HTTP 401: no `WWW-Authenticate`
challenge, no RFC 6750 body (as a proxy with its own notion of credentials would), so the
token check never sees it. `--uses N` refuses a token after
its N-th request, as a server that revoked it would (the client must obtain a new one). `--static TOKEN` accepts that one opaque token instead (no authorization server
needed). Runs on 127.0.0.1:PORT, path /mcp, with the interop venv's python
(scripts/install-servers.sh).
"""
import json
import sys
import time
import urllib.parse
import urllib.request

import jwt
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer


class JwtVerifier:
    """Verifies the issuer's JWT access tokens; the key set is read from its metadata."""

    def __init__(self, issuer: str, resource: str, strict: bool, uses: int | None = None):
        self.issuer = issuer
        self.resource = resource
        self.strict = strict
        self.uses = uses
        self.seen: dict[str, int] = {}
        self.keys = None

    def _jwks(self) -> jwt.PyJWKClient:
        if self.keys is None:
            base = self.issuer.rstrip("/")
            for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
                try:
                    with urllib.request.urlopen(base + path, timeout=5) as answer:
                        metadata = json.load(answer)
                    self.keys = jwt.PyJWKClient(metadata["jwks_uri"])
                    break
                except Exception:  # noqa: BLE001 - try the next document
                    continue
        return self.keys

    async def verify_token(self, token: str) -> AccessToken | None:
        if self.uses is not None:
            self.seen[token] = self.seen.get(token, 0) + 1
            if self.seen[token] > self.uses:
                return None
        try:
            key = self._jwks().get_signing_key_from_jwt(token).key
            options = {"verify_aud": self.strict, "verify_exp": self.strict, "require": ["exp", "iss"]}
            claims = jwt.decode(
                token,
                key,
                algorithms=["RS256", "PS256", "ES256"],
                issuer=self.issuer,
                audience=self.resource if self.strict else None,
                options=options,
            )
        except Exception:  # noqa: BLE001 - any failure is an invalid token
            return None
        audience = claims.get("aud")
        if isinstance(audience, list):
            audience = self.resource if self.resource in audience else (audience[0] if audience else None)
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or claims.get("sub") or ""),
            scopes=str(claims.get("scope") or "").split(),
            expires_at=int(claims["exp"]) if self.strict else None,
            resource=audience,
        )


class StaticVerifier:
    """Accepts one opaque token."""

    def __init__(self, token: str, resource: str):
        self.token = token
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        if token != self.token:
            return None
        return AccessToken(token=token, client_id="static", scopes=[], resource=self.resource)


class QueryToken:
    """The lax variant's mistake: `?access_token=` becomes the bearer token."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            query = urllib.parse.parse_qs(scope.get("query_string", b"").decode())
            token = (query.get("access_token") or [None])[0]
            if token:
                headers = [(name, value) for name, value in scope["headers"] if name.lower() != b"authorization"]
                headers.append((b"authorization", f"Bearer {token}".encode()))
                scope = dict(scope, headers=headers)
        await self.app(scope, receive, send)


class FrontRefusal:
    """`--front-400`: a token for another audience, or expired, never reaches the token check."""

    def __init__(self, app, resource: str):
        self.app = app
        self.resource = resource

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            bearer = headers.get(b"authorization", b"").decode()
            if bearer.lower().startswith("bearer "):
                try:
                    claims = jwt.decode(bearer[7:].strip(), options={"verify_signature": False})
                except Exception:  # noqa: BLE001 - not a JWT: let the token check answer
                    claims = None
                audience = claims.get("aud") if claims else None
                audiences = audience if isinstance(audience, list) else [audience]
                foreign = claims is not None and self.resource not in audiences
                expired = claims is not None and int(claims.get("exp", 0)) < time.time()
                if foreign or expired:
                    body = json.dumps({
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {"code": -32020, "message": "Missing required header Mcp-Method"},
                    }).encode()
                    await send({
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [(b"content-type", b"application/json")],
                    })
                    await send({"type": "http.response.body", "body": body})
                    return
        await self.app(scope, receive, send)


class FrontBare401:
    """`--front-401`: a bearer token that is not a JWT never reaches the token check."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            bearer = dict(scope["headers"]).get(b"authorization", b"").decode()
            if bearer.lower().startswith("bearer ") and bearer[7:].strip().count(".") != 2:
                await send({
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"text/plain")],
                })
                await send({"type": "http.response.body", "body": b"Unauthorized"})
                return
        await self.app(scope, receive, send)


def main() -> None:
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit("usage: py_protected.py PORT ISSUER [--no-audience-check] [--static TOKEN]")
    port, issuer = int(args[0]), args[1]
    strict = "--lax" not in args
    resource = f"http://127.0.0.1:{port}/mcp"
    if "--static" in args:
        verifier = StaticVerifier(args[args.index("--static") + 1], resource)
    else:
        uses = int(args[args.index("--uses") + 1]) if "--uses" in args else None
        verifier = JwtVerifier(issuer, resource, strict, uses)
    server = MCPServer(
        "protected-time",
        token_verifier=verifier,
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=resource,
            validate_token_resource=strict,
        ),
    )

    @server.tool()
    def get_time() -> str:
        """The server's clock, in seconds since the epoch."""
        return str(int(time.time()))

    app = server.streamable_http_app(streamable_http_path="/mcp")
    app = app if strict else QueryToken(app)
    if "--front-400" in args:
        app = FrontRefusal(app, resource)
    if "--front-401" in args:
        app = FrontBare401(app)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
