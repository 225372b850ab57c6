#!/usr/bin/env bash
# The setup action's step (setup/action.yml): downloads this repository's release archive of
# mcp-eval for the runner's OS and architecture, verifies it against the `.sha256` the release
# publishes beside it, and puts the binary on PATH for the job's later steps ($GITHUB_PATH).
#
# Environment (the action sets it; a test can too):
#   MCP_EVAL_VERSION      the release tag (vX.Y.Z); empty: from MCP_EVAL_ACTION_REF, else looked up
#   MCP_EVAL_ACTION_REF   the ref the action is used at (`v1.0.0`, `v1`, a branch, a SHA)
#   MCP_EVAL_REPOSITORY   OWNER/NAME of the releases (the action's own repository)
#   GITHUB_SERVER_URL     https://github.com unless on GitHub Enterprise Server
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_PATH, GITHUB_OUTPUT   as the runner sets them
#   GH_TOKEN              for `gh api` when the version is looked up
set -euo pipefail

fail() { echo "::error title=mcp-eval setup::$*"; exit 1; }

repo="${MCP_EVAL_REPOSITORY:?MCP_EVAL_REPOSITORY (OWNER/NAME) is not set}"
version="${MCP_EVAL_VERSION:-}"
ref="${MCP_EVAL_ACTION_REF:-}"
if [ -z "$version" ]; then
  if [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    version="$ref"
  else
    prefix="v"
    [[ "$ref" =~ ^v[0-9]+$ ]] && prefix="$ref."
    # Newest first; drafts and pre-releases left out.
    version="$(gh api "repos/$repo/releases?per_page=100" \
      --jq "[.[] | select((.draft or .prerelease) | not) | .tag_name | select(startswith(\"$prefix\"))][0] // empty")" \
      || fail "could not list the releases of $repo (set the input version, e.g. v1.0.0)"
    [ -n "$version" ] || fail "$repo has no release whose tag starts with $prefix (set the input version)"
  fi
fi
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || fail "version '$version' is not a release tag like v1.0.0"

case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
  Linux/X64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
  *) fail "no mcp-eval release binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?} (Linux and macOS, X64 and ARM64)" ;;
esac

archive="mcp-eval-$version-$target.tar.gz"
base="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download/$version"
dir="${RUNNER_TEMP:?RUNNER_TEMP is not set}/mcp-eval-$version"
mkdir -p "$dir"
cd "$dir"
curl -sSfL --retry 3 -o "$archive" "$base/$archive" || fail "could not download $base/$archive"
curl -sSfL --retry 3 -o "$archive.sha256" "$base/$archive.sha256" || fail "could not download $base/$archive.sha256"
# The .sha256 file is `HASH  NAME` (shasum -a 256); only the hash is taken, for this archive.
want="$(awk 'NR == 1 { print tolower($1) }' "$archive.sha256")"
if command -v sha256sum >/dev/null 2>&1; then
  got="$(sha256sum "$archive" | awk '{ print $1 }')"
else
  got="$(shasum -a 256 "$archive" | awk '{ print $1 }')"
fi
[[ "$want" =~ ^[0-9a-f]{64}$ ]] || fail "$archive.sha256 holds no SHA-256"
[ "$got" = "$want" ] || fail "checksum mismatch for $archive: expected $want, got $got (not installed)"
tar -xzf "$archive" mcp-eval
chmod +x mcp-eval
./mcp-eval --version >/dev/null || fail "the downloaded mcp-eval does not run on this runner"
echo "$dir" >> "${GITHUB_PATH:?GITHUB_PATH is not set}"
{
  echo "version=$version"
  echo "path=$dir/mcp-eval"
} >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
echo "mcp-eval $version ($target) installed at $dir/mcp-eval, sha256 $got"
