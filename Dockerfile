# mcp-eval GitHub Action image: a static mcp-eval binary on a minimal Alpine runtime.
#
# Build (one architecture per build; the release workflow builds linux/amd64 and linux/arm64
# with buildx):
#   docker build -t mcp-eval-action .
#
# TLS is rustls with the *ring* crypto provider (reqwest and the raw header probes for the server
# under test, octocrab for the GitHub API), not aws-lc-rs: ring needs only a C compiler, while aws-lc-sys needs cmake (and
# often clang/Go) in the builder. So the builder is Alpine's Rust image plus musl-dev, and the
# binary is fully static on musl for x86_64 and aarch64 alike.

FROM rust:1.95-alpine AS builder
# hadolint ignore=DL3018
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY Cargo.toml Cargo.lock rustfmt.toml ./
COPY src ./src
RUN target="$(uname -m)-unknown-linux-musl" \
 && cargo build --release --locked --target "$target" \
 && cp "target/$target/release/mcp-eval" /mcp-eval \
 && /mcp-eval --version

# The runtime keeps a shell because `server-command` is started through `sh -c`; it adds only
# the CA certificates (for https servers under test and the GitHub API) to Alpine's base.
FROM alpine:3.22
# hadolint ignore=DL3018
RUN apk add --no-cache ca-certificates
COPY --from=builder /mcp-eval /mcp-eval
# The runner mounts the workspace and runs the container as root (GitHub's rule for Docker
# actions), so there is no USER here. Exec form: mcp-eval is PID 1 and receives SIGTERM itself.
ENTRYPOINT ["/mcp-eval", "action"]
