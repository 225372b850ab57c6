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
# The demo's golden set, cassettes and example price table are compiled into the binary.
COPY golden ./golden
RUN target="$(uname -m)-unknown-linux-musl" \
 && cargo build --release --locked --target "$target" \
 && cp "target/$target/release/mcp-eval" /mcp-eval \
 && /mcp-eval --version

# The runtime keeps a shell because `server-command` is started through `sh -c`; it adds only
# the CA certificates (for https servers under test and the GitHub API) and tini to Alpine's base.
FROM alpine:3.22
# hadolint ignore=DL3018
RUN apk add --no-cache ca-certificates tini
# On PATH, so that a `server-command` can start `mcp-eval demo-server --stdio` (or any other
# mcp-eval subcommand) by name.
COPY --from=builder /mcp-eval /usr/local/bin/mcp-eval
# The runner mounts the workspace and runs the container as root (GitHub's rule for Docker
# actions), so there is no USER here. tini is PID 1: the processes a stdio server leaves behind
# are re-parented to PID 1, and tini reaps them (mcp-eval as PID 1 would leave them zombies); it
# forwards SIGTERM and SIGINT to mcp-eval and exits with mcp-eval's exit status.
# scripts/test-image.sh runs this stage (on a stand-in for Alpine) the way the runner does.
ENTRYPOINT ["/sbin/tini", "--", "/usr/local/bin/mcp-eval", "action"]
