#!/usr/bin/env python3
"""A small OAuth 2.1 authorization server for the tests: the client-credentials grant with
resource indicators (RFC 8707), issuing RS256 JWT access tokens.

Usage: py_oauth_as.py PORT CLIENT_ID CLIENT_SECRET [--resource URL]... [--ttl SECONDS]
                      [--oidc-only] [--post-only]

Serves on 127.0.0.1:PORT its metadata at /.well-known/oauth-authorization-server (RFC 8414; with
--oidc-only at /.well-known/openid-configuration alone), its key set at /jwks and its token
endpoint at /token. A token is issued only to the one client, authenticated by
client_secret_basic (or client_secret_post; --post-only: by that alone), and only for a
`resource` it knows (--resource, repeatable): `aud` is that resource, `exp` TTL seconds on
(default 3600). Refusals are RFC 6749 error bodies. GET /stats tells how many tokens were issued, and which (for the tests' leak scans).
Run it with the interop venv's python (PyJWT and cryptography).
"""
import base64
import json
import sys
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KID = "fixture-1"


def options() -> dict:
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    found = {"port": int(args[0]), "client_id": args[1], "secret": args[2], "resources": [], "ttl": 3600}
    rest = args[3:]
    found["oidc_only"] = "--oidc-only" in rest
    found["post_only"] = "--post-only" in rest
    for index, arg in enumerate(rest):
        if arg == "--resource":
            found["resources"].append(rest[index + 1])
        if arg == "--ttl":
            found["ttl"] = int(rest[index + 1])
    return found


OPTIONS = options()
ISSUER = f"http://127.0.0.1:{OPTIONS['port']}"
ISSUED = {"count": 0, "tokens": []}


def metadata() -> dict:
    methods = ["client_secret_post"] if OPTIONS["post_only"] else ["client_secret_basic", "client_secret_post"]
    return {
        "issuer": ISSUER,
        "token_endpoint": f"{ISSUER}/token",
        "jwks_uri": f"{ISSUER}/jwks",
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": methods,
        "response_types_supported": ["code"],
    }


def jwks() -> dict:
    public = jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key(), as_dict=True)
    public.update({"kid": KID, "use": "sig", "alg": "RS256"})
    return {"keys": [public]}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_args) -> None:
        pass

    def reply(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/.well-known/oauth-authorization-server" and not OPTIONS["oidc_only"]:
            self.reply(200, metadata())
        elif path == "/.well-known/openid-configuration" and OPTIONS["oidc_only"]:
            self.reply(200, metadata())
        elif path == "/jwks":
            self.reply(200, jwks())
        elif path == "/stats":
            self.reply(200, {"issued": ISSUED["count"], "tokens": ISSUED["tokens"]})
        else:
            self.reply(404, {"error": "not_found"})

    def do_POST(self) -> None:
        if self.path.split("?")[0] != "/token":
            self.reply(404, {"error": "not_found"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(length).decode(), keep_blank_values=True)
        field = lambda name: (form.get(name) or [None])[0]  # noqa: E731
        client_id, secret = field("client_id"), field("client_secret")
        basic = self.headers.get("Authorization", "")
        if basic.lower().startswith("basic "):
            if OPTIONS["post_only"]:
                self.reply(401, {"error": "invalid_client", "error_description": "client_secret_basic is not allowed"})
                return
            decoded = base64.b64decode(basic[6:]).decode()
            client_id, _, secret = decoded.partition(":")
            client_id, secret = urllib.parse.unquote(client_id), urllib.parse.unquote(secret)
        if client_id != OPTIONS["client_id"] or secret != OPTIONS["secret"]:
            self.reply(401, {"error": "invalid_client", "error_description": "client authentication failed"},
                       {"WWW-Authenticate": 'Basic realm="token"'})
            return
        if field("grant_type") != "client_credentials":
            self.reply(400, {"error": "unsupported_grant_type", "error_description": "only client_credentials"})
            return
        resource = field("resource")
        if resource not in OPTIONS["resources"]:
            self.reply(400, {"error": "invalid_target", "error_description": f"unknown resource {resource!r}"})
            return
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": client_id,
            "client_id": client_id,
            "aud": resource,
            "iat": now,
            "exp": now + OPTIONS["ttl"],
            "jti": uuid.uuid4().hex,
            "scope": field("scope") or "",
        }
        token = jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": KID, "typ": "at+jwt"})
        ISSUED["count"] += 1
        ISSUED["tokens"].append(token)
        answer = {"access_token": token, "token_type": "Bearer", "expires_in": OPTIONS["ttl"]}
        if field("scope"):
            answer["scope"] = field("scope")
        self.reply(200, answer)


def main() -> None:
    ThreadingHTTPServer(("127.0.0.1", OPTIONS["port"]), Handler).serve_forever()


if __name__ == "__main__":
    main()
