#!/usr/bin/env python3
"""Serve a small MCP server protected by the official Python SDK's own auth support.

Usage: py_protected.py PORT ISSUER [--no-audience-check] [--static TOKEN]

The SDK's resource-server side (`mcp.server.auth`): `AuthSettings` with this server's URL as
`resource_server_url` (so it serves RFC 9728 metadata and answers 401/403 with RFC 6750 error
bodies and a Bearer challenge), and a `TokenVerifier` that verifies the authorization server's
JWT access tokens (signature by the issuer's JWKS, `iss`, `exp`) and reports their `aud` as the
token's resource, which the SDK's bearer middleware checks against this server
(`validate_token_resource`). `--no-audience-check` is the broken variant: the audience is
neither checked by the verifier nor by the middleware, so a token minted for another resource
is accepted. `--static TOKEN` accepts that one opaque token instead (no authorization server
needed). Runs on 127.0.0.1:PORT, path /mcp, with the interop venv's python
(scripts/install-servers.sh).
"""
import json
import sys
import time
import urllib.request

import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer


class JwtVerifier:
    """Verifies the issuer's JWT access tokens; the key set is read from its metadata."""

    def __init__(self, issuer: str, resource: str, check_audience: bool):
        self.issuer = issuer
        self.resource = resource
        self.check_audience = check_audience
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
        try:
            key = self._jwks().get_signing_key_from_jwt(token).key
            options = {"verify_aud": self.check_audience, "require": ["exp", "iss"]}
            claims = jwt.decode(
                token,
                key,
                algorithms=["RS256", "PS256", "ES256"],
                issuer=self.issuer,
                audience=self.resource if self.check_audience else None,
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
            expires_at=int(claims["exp"]),
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


def main() -> None:
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit("usage: py_protected.py PORT ISSUER [--no-audience-check] [--static TOKEN]")
    port, issuer = int(args[0]), args[1]
    check_audience = "--no-audience-check" not in args
    resource = f"http://127.0.0.1:{port}/mcp"
    if "--static" in args:
        verifier = StaticVerifier(args[args.index("--static") + 1], resource)
    else:
        verifier = JwtVerifier(issuer, resource, check_audience)
    server = MCPServer(
        "protected-time",
        token_verifier=verifier,
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=resource,
            validate_token_resource=check_audience,
        ),
    )

    @server.tool()
    def get_time() -> str:
        """The server's clock, in seconds since the epoch."""
        return str(int(time.time()))

    server.run("streamable-http", host="127.0.0.1", port=port, streamable_http_path="/mcp")


if __name__ == "__main__":
    main()
