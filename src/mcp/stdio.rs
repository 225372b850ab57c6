//! stdio transport (spec-notes §7): the server command runs in its own process group, messages are
//! single lines of JSON on stdin/stdout, stderr is captured (bounded) for the report, and the
//! whole group is ended when we are done: close stdin, wait, SIGTERM, then SIGKILL.
//!
//! The server under test never inherits our environment: it starts with a cleared environment
//! plus the variables of [`INHERITED_VARS`] that are set here and the variables the caller gives
//! (the user's `--server-env`). Our own secrets (tokens, model API keys, the Action's inputs and
//! `ACTIONS_*` variables) stay with us.
//!
//! A reader task routes every stdout line: responses to the waiting request by id,
//! notifications to the request they belong to (progress token, subscription id, or the only
//! request in flight), and everything that breaks the framing (non-JSON lines, server-sent
//! requests) to [`StdoutViolations`], which the checks read.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{oneshot, watch};

use super::evidence::Redactor;
use super::exchange::{Body, Exchange, Failure, Outgoing};
use super::jsonrpc;

/// The most bytes of one stdout line we keep; a longer line is dropped and recorded.
pub(crate) const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;
/// How many bytes of stderr we keep (the tail).
const STDERR_TAIL_BYTES: usize = 8 * 1024;
/// How long to wait for a failing server's stderr to close before reading its tail.
const STDERR_SETTLE: Duration = Duration::from_millis(500);
/// How many framing violations we keep as examples.
const MAX_EXAMPLES: usize = 5;

/// The variables a stdio server inherits from our environment, when they are set; every other
/// variable is cleared. They let a shell and an interpreter find programs (`PATH`), a home
/// directory and user (`HOME`, `USER`, `LOGNAME`, `SHELL`), a locale (`LANG`, `LC_ALL`,
/// `LC_CTYPE`), a time zone (`TZ`), a temporary directory (`TMPDIR`) and a terminal type
/// (`TERM`); none of them carries a secret. Anything else the server needs is passed
/// explicitly (the `env` of [`StdioTransport::spawn`]).
pub(crate) const INHERITED_VARS: [&str; 11] =
    ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TERM"];

/// What the server wrote on stdout that is not a valid MCP message stream.
#[derive(Debug, Default, Clone)]
pub(crate) struct StdoutViolations {
    /// Lines that are not a single JSON object (first few, excerpted), and their count.
    pub non_json: Vec<String>,
    /// How many such lines in all.
    pub non_json_count: usize,
    /// Messages that are JSON-RPC requests (a `method` and an `id`): servers MUST NOT send them.
    pub requests: Vec<Value>,
    /// Messages that no request was waiting for (late responses, replies to notifications).
    pub unattributed: Vec<Value>,
    /// How many messages arrived in all.
    pub message_count: usize,
    /// Responses whose id is not one we sent (null, another JSON type, or changed): the first
    /// few, and their count (M-6/M-11; such a response can reach no waiting request).
    pub unechoed: Vec<Value>,
    /// How many such responses in all.
    pub unechoed_count: usize,
    /// How many requests got no response within their timeout.
    pub timed_out: usize,
    /// `notifications/message` that arrived while every request in flight had no `logLevel`
    /// (L-1): the first few, and their count.
    pub unrequested_logs: Vec<Value>,
    /// How many such log messages in all.
    pub unrequested_log_count: usize,
    /// Subscription notifications (list changes, resource updates, acknowledgements) without
    /// the `subscriptionId` tag (S-2): the first few, and their count.
    pub untagged_subscription: Vec<Value>,
    /// How many such notifications in all.
    pub untagged_subscription_count: usize,
}

struct Pending {
    messages: Vec<Value>,
    progress_token: Option<Value>,
    /// The request asked for log messages (`_meta` logLevel).
    log_level: bool,
    sender: oneshot::Sender<(Vec<Value>, Value)>,
}

type PendingMap = Arc<Mutex<HashMap<String, Pending>>>;
/// The keys of every id we sent a request with.
type SentIds = Arc<Mutex<HashSet<String>>>;

/// A running stdio server.
pub(crate) struct StdioTransport {
    command: String,
    child: Mutex<Option<Child>>,
    pid: Option<u32>,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    pending: PendingMap,
    sent: SentIds,
    violations: Arc<Mutex<StdoutViolations>>,
    stderr_tail: Arc<Mutex<VecDeque<u8>>>,
    /// True once the server's stderr reached end of file.
    stderr_done: watch::Receiver<bool>,
    exited: watch::Receiver<Option<String>>,
    timeout: Duration,
    redactor: Redactor,
}

impl std::fmt::Debug for StdioTransport {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("StdioTransport").field("command", &self.command).field("pid", &self.pid).finish()
    }
}

impl StdioTransport {
    /// Starts `command` through `sh -c` in a new process group, with a scrubbed environment:
    /// the variables of [`INHERITED_VARS`] that are set in ours, then `env` (name, value), which
    /// wins over them. Fails only when the process cannot be spawned at all (no shell), which
    /// the caller reports as "cannot be started".
    pub(crate) fn spawn(
        command: &str,
        env: &[(String, String)],
        timeout: Duration,
        redactor: Redactor,
    ) -> std::io::Result<Arc<Self>> {
        let inherited =
            INHERITED_VARS.iter().filter_map(|name| std::env::var_os(name).map(|value| (OsString::from(name), value)));
        let given = env.iter().map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .env_clear()
            .envs(inherited.chain(given))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let pending: PendingMap = Arc::new(Mutex::new(HashMap::new()));
        let sent: SentIds = Arc::default();
        let violations = Arc::new(Mutex::new(StdoutViolations::default()));
        let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_BYTES)));
        let (exit_sender, exited) = watch::channel(None);
        if let Some(stdout) = stdout {
            tokio::spawn(read_stdout(stdout, pending.clone(), sent.clone(), violations.clone(), exit_sender));
        }
        let (stderr_done_sender, stderr_done) = watch::channel(stderr.is_none());
        if let Some(mut stderr) = stderr {
            let tail = stderr_tail.clone();
            tokio::spawn(async move {
                let mut chunk = [0u8; 4096];
                while let Ok(read) = stderr.read(&mut chunk).await {
                    if read == 0 {
                        break;
                    }
                    {
                        let mut tail = crate::mcp::sync::lock(&tail);
                        tail.extend(&chunk[..read]);
                        let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                        tail.drain(..excess);
                    }
                }
                let _ = stderr_done_sender.send(true);
            });
        }
        Ok(Arc::new(Self {
            command: command.to_owned(),
            child: Mutex::new(Some(child)),
            pid,
            stdin: tokio::sync::Mutex::new(stdin),
            pending,
            sent,
            violations,
            stderr_tail,
            stderr_done,
            exited,
            timeout,
            redactor,
        }))
    }

    /// A copy of the framing violations seen so far.
    pub(crate) fn violations(&self) -> StdoutViolations {
        crate::mcp::sync::lock(&self.violations).clone()
    }

    /// The stderr tail once the server's stderr has closed (or after `STDERR_SETTLE`): a server
    /// that failed to start writes its reason just before it exits, and reading the tail at once
    /// could miss it.
    pub(crate) async fn stderr_tail_settled(&self) -> String {
        let mut done = self.stderr_done.clone();
        let _ = tokio::time::timeout(STDERR_SETTLE, async { drop(done.wait_for(|done| *done).await) }).await;
        self.stderr_tail()
    }

    /// The last bytes the server wrote on stderr, redacted.
    pub(crate) fn stderr_tail(&self) -> String {
        let bytes: Vec<u8> = crate::mcp::sync::lock(&self.stderr_tail).iter().copied().collect();
        self.redactor.redact(&String::from_utf8_lossy(&bytes))
    }

    /// Why the process exited, once it has.
    pub(crate) fn exit_reason(&self) -> Option<String> {
        self.exited.borrow().clone()
    }

    /// Sends one message and, for requests, waits for the response with the same id.
    pub(crate) async fn send(&self, outgoing: &Outgoing, id: Option<Value>) -> Exchange {
        let started = Instant::now();
        let mut message = match &outgoing.body {
            Body::Json(value) => value.clone(),
            Body::Raw(bytes) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
            Body::Empty => Value::Null,
        };
        if let (Some(id), Some(object)) = (&id, message.as_object_mut()) {
            object.insert("id".into(), id.clone());
        }
        let line = match &outgoing.body {
            Body::Raw(bytes) => String::from_utf8_lossy(bytes).replace('\n', " "),
            _ => serde_json::to_string(&message).unwrap_or_default(),
        };
        let mut exchange = Exchange {
            method: outgoing.method().map(str::to_owned),
            id: id.clone(),
            request_excerpt: self.redactor.excerpt(line.as_bytes()),
            ..Exchange::default()
        };
        let receiver = id.as_ref().map(|id| {
            let (sender, receiver) = oneshot::channel();
            let progress_token = message.pointer("/params/_meta/progressToken").cloned();
            let log_level =
                message.pointer(&format!("/params/_meta/{}", jsonrpc::META_LOG_LEVEL.replace('/', "~1"))).is_some();
            {
                let mut sent = crate::mcp::sync::lock(&self.sent);
                sent.insert(id_key(id));
            }
            {
                let mut pending = crate::mcp::sync::lock(&self.pending);
                pending.insert(id_key(id), Pending { messages: Vec::new(), progress_token, log_level, sender });
            }
            receiver
        });
        if let Some(reason) = self.exit_reason() {
            self.forget(id.as_ref());
            exchange.failure = Some(Failure::Exited(reason));
            return exchange;
        }
        {
            let mut stdin = self.stdin.lock().await;
            let written = match stdin.as_mut() {
                Some(stdin) => {
                    let mut bytes = line.into_bytes();
                    bytes.push(b'\n');
                    stdin.write_all(&bytes).await.and(stdin.flush().await)
                }
                None => Err(std::io::Error::other("stdin already closed")),
            };
            if let Err(error) = written {
                self.forget(id.as_ref());
                exchange.failure = Some(Failure::Exited(format!("cannot write to stdin: {error}")));
                return exchange;
            }
        }
        let Some(receiver) = receiver else {
            exchange.elapsed_ms = started.elapsed().as_millis() as u64;
            return exchange;
        };
        let timeout = outgoing.timeout.unwrap_or(self.timeout);
        let mut exited = self.exited.clone();
        let settle = outgoing.settle_after_first;
        let pending_map = self.pending.clone();
        let key = id.as_ref().map(id_key);
        // For a listen: resolve once the first message has been there for `settle`.
        let settled = async move {
            let Some(settle) = settle else { return std::future::pending::<()>().await };
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                let has_first = {
                    let pending = crate::mcp::sync::lock(&pending_map);
                    key.as_ref().and_then(|key| pending.get(key)).is_some_and(|waiting| !waiting.messages.is_empty())
                };
                if has_first {
                    tokio::time::sleep(settle).await;
                    return;
                }
            }
        };
        let outcome = tokio::select! {
            received = receiver => received.ok(),
            _ = tokio::time::sleep(timeout) => None,
            _ = settled => None,
            // The watch guard is dropped inside: the future must stay `Send`.
            () = async { drop(exited.wait_for(Option::is_some).await) } => {
                // The response may have been read just before the exit: give the reader a moment.
                tokio::time::sleep(Duration::from_millis(20)).await;
                None
            }
        };
        match outcome {
            Some((messages, response)) => {
                exchange.body_excerpt = self.redactor.excerpt(response.to_string().as_bytes());
                exchange.messages = messages;
                exchange.response = Some(response);
            }
            None => {
                let pending = id.as_ref().and_then(|id| crate::mcp::sync::lock(&self.pending).remove(&id_key(id)));
                if let Some(pending) = pending {
                    exchange.messages = pending.messages;
                }
                exchange.failure = Some(match self.exit_reason() {
                    Some(reason) => Failure::Exited(reason),
                    None => {
                        {
                            let mut violations = crate::mcp::sync::lock(&self.violations);
                            violations.timed_out += 1;
                        }
                        Failure::Timeout
                    }
                });
            }
        }
        exchange.elapsed_ms = started.elapsed().as_millis() as u64;
        exchange
    }

    /// How many messages (notifications) have arrived so far for the request with this id
    /// that is still waiting for its response; `None` once it has its response or gave up.
    pub(crate) fn messages_so_far(&self, id: &Value) -> Option<usize> {
        crate::mcp::sync::lock(&self.pending).get(&id_key(id)).map(|waiting| waiting.messages.len())
    }

    /// Stops waiting for the response to the request with this id (its `send` was dropped).
    pub(crate) fn abandon(&self, id: &Value) {
        self.forget(Some(id));
    }

    fn forget(&self, id: Option<&Value>) {
        if let Some(id) = id {
            let mut pending = crate::mcp::sync::lock(&self.pending);
            pending.remove(&id_key(id));
        }
    }

    /// Closes stdin and reports whether the process exited within `grace`.
    pub(crate) async fn close_stdin_and_wait(&self, grace: Duration) -> bool {
        self.stdin.lock().await.take();
        let mut exited = self.exited.clone();
        let reader_done = tokio::time::timeout(grace, exited.wait_for(Option::is_some)).await.is_ok();
        if !reader_done {
            return false;
        }
        // stdout closed; make sure the process itself is gone too.
        let child = crate::mcp::sync::lock(&self.child).take();
        match child {
            Some(mut child) => {
                let waited = tokio::time::timeout(grace, child.wait()).await;
                let done = waited.is_ok();
                {
                    let mut slot = crate::mcp::sync::lock(&self.child);
                    *slot = Some(child);
                }
                done
            }
            None => true,
        }
    }

    /// Ends the server: close stdin, wait briefly, SIGTERM the group, then SIGKILL it.
    pub(crate) async fn shutdown(&self) {
        self.stdin.lock().await.take();
        let child = crate::mcp::sync::lock(&self.child).take();
        let Some(mut child) = child else { return };
        if tokio::time::timeout(Duration::from_millis(500), child.wait()).await.is_ok() {
            signal_group(self.pid, libc::SIGKILL);
            return;
        }
        signal_group(self.pid, libc::SIGTERM);
        if tokio::time::timeout(Duration::from_millis(1000), child.wait()).await.is_err() {
            signal_group(self.pid, libc::SIGKILL);
            let _ = child.wait().await;
        }
        // Children of the server may outlive it; the group goes with it.
        signal_group(self.pid, libc::SIGKILL);
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        signal_group(self.pid, libc::SIGKILL);
    }
}

/// Sends `signal` to the process group led by `pid` (the server was spawned as a group leader).
fn signal_group(pid: Option<u32>, signal: libc::c_int) {
    let Some(pid) = pid.and_then(|pid| libc::pid_t::try_from(pid).ok()) else { return };
    if pid <= 1 {
        return;
    }
    #[allow(unsafe_code, reason = "kill(2) on our own child's process group; no memory is touched")]
    // SAFETY: kill(2) takes plain integers and has no memory-safety preconditions.
    unsafe {
        libc::kill(-pid, signal);
    }
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

async fn read_stdout(
    mut stdout: tokio::process::ChildStdout,
    pending: PendingMap,
    sent: SentIds,
    violations: Arc<Mutex<StdoutViolations>>,
    exit_sender: watch::Sender<Option<String>>,
) {
    let mut buffer: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut dropping_long_line = false;
    loop {
        let read = match stdout.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let mut start = 0;
        for (index, &byte) in chunk[..read].iter().enumerate() {
            if byte == b'\n' {
                if dropping_long_line {
                    dropping_long_line = false;
                } else {
                    buffer.extend_from_slice(&chunk[start..index]);
                    route_line(&buffer, &pending, &sent, &violations);
                }
                buffer.clear();
                start = index + 1;
            }
        }
        if !dropping_long_line {
            buffer.extend_from_slice(&chunk[start..read]);
            if buffer.len() > MAX_LINE_BYTES {
                dropping_long_line = true;
                buffer.clear();
                {
                    let mut violations = crate::mcp::sync::lock(&violations);
                    violations.non_json_count += 1;
                    if violations.non_json.len() < MAX_EXAMPLES {
                        violations.non_json.push(format!("a line longer than {MAX_LINE_BYTES} bytes"));
                    }
                }
            }
        }
    }
    if !buffer.is_empty() && !dropping_long_line {
        route_line(&buffer, &pending, &sent, &violations);
    }
    let _ = exit_sender.send(Some("stdout closed (the process exited or closed its output)".into()));
}

fn route_line(line: &[u8], pending: &PendingMap, sent: &SentIds, violations: &Arc<Mutex<StdoutViolations>>) {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return;
    }
    let message = match serde_json::from_slice::<Value>(trimmed) {
        Ok(message @ Value::Object(_)) => message,
        _ => {
            {
                let mut violations = crate::mcp::sync::lock(violations);
                violations.non_json_count += 1;
                if violations.non_json.len() < MAX_EXAMPLES {
                    let text = String::from_utf8_lossy(&trimmed[..trimmed.len().min(300)]).into_owned();
                    violations.non_json.push(text);
                }
            }
            return;
        }
    };
    let mut pending = crate::mcp::sync::lock(pending);
    {
        let mut violations = crate::mcp::sync::lock(violations);
        violations.message_count += 1;
        if jsonrpc::is_request(&message) && violations.requests.len() < MAX_EXAMPLES {
            violations.requests.push(message.clone());
        }
    }
    if jsonrpc::is_response(&message) {
        let key = message.get("id").map(id_key).unwrap_or_else(|| "null".into());
        if let Some(waiting) = pending.remove(&key) {
            let _ = waiting.sender.send((waiting.messages, message));
            return;
        }
        let ours = crate::mcp::sync::lock(sent).contains(&key);
        if !ours {
            {
                let mut violations = crate::mcp::sync::lock(violations);
                violations.unechoed_count += 1;
                if violations.unechoed.len() < MAX_EXAMPLES {
                    violations.unechoed.push(message.clone());
                }
            }
        }
    } else {
        let token = message.pointer("/params/progressToken");
        let subscription =
            message.pointer(&format!("/params/_meta/{}", jsonrpc::META_SUBSCRIPTION_ID.replace('/', "~1")));
        let owner = pending
            .iter()
            .find(|(key, waiting)| {
                token.is_some() && waiting.progress_token.as_ref() == token
                    || subscription.is_some_and(|subscription| id_key(subscription) == **key)
            })
            .map(|(key, _)| key.clone())
            .or_else(|| (pending.len() == 1).then(|| pending.keys().next().cloned()).flatten());
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        {
            let mut violations = crate::mcp::sync::lock(violations);
            // Request-scoped logs that cannot be attributed by id: when no request in flight
            // asked for logs, this one belongs to a request that did not (L-1).
            if method == "notifications/message"
                && subscription.is_none()
                && owner.is_none()
                && !pending.is_empty()
                && pending.values().all(|waiting| !waiting.log_level)
            {
                violations.unrequested_log_count += 1;
                if violations.unrequested_logs.len() < MAX_EXAMPLES {
                    violations.unrequested_logs.push(message.clone());
                }
            }
            // Subscription notifications exist only on listen streams, which MUST tag them (S-2).
            let subscription_kind = method.ends_with("/list_changed")
                || method == "notifications/resources/updated"
                || method == "notifications/subscriptions/acknowledged";
            if subscription_kind && subscription.is_none() {
                violations.untagged_subscription_count += 1;
                if violations.untagged_subscription.len() < MAX_EXAMPLES {
                    violations.untagged_subscription.push(message.clone());
                }
            }
        }
        if let Some(waiting) = owner.and_then(|key| pending.get_mut(&key)) {
            if waiting.messages.len() < 1000 {
                waiting.messages.push(message);
            }
            return;
        }
    }
    {
        let mut violations = crate::mcp::sync::lock(violations);
        if violations.unattributed.len() < MAX_EXAMPLES {
            violations.unattributed.push(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server sees the allow-list and what it is given, nothing else of our environment.
    #[tokio::test]
    async fn the_server_starts_with_a_scrubbed_environment() {
        let dir = tempfile::tempdir().expect("temp dir");
        let dump = dir.path().join("env.txt");
        // Some variable of ours outside the allow-list (the test harness always has a few).
        let ours: Option<String> = std::env::vars()
            .map(|(name, _)| name)
            .find(|name| !INHERITED_VARS.contains(&name.as_str()) && name != "FOO" && name != "PATH_EXTRA");
        let command = format!("env > '{}'", dump.display());
        let env = [("FOO".to_owned(), "bar baz".to_owned()), ("PATH_EXTRA".to_owned(), String::new())];
        let transport =
            StdioTransport::spawn(&command, &env, Duration::from_secs(5), Redactor::default()).expect("spawn");
        assert!(transport.close_stdin_and_wait(Duration::from_secs(5)).await, "the shell exits");
        transport.shutdown().await;
        let seen = std::fs::read_to_string(&dump).expect("the env dump");
        let names: Vec<&str> = seen.lines().filter_map(|line| line.split_once('=').map(|(name, _)| name)).collect();
        assert!(seen.lines().any(|line| line == "FOO=bar baz"), "{seen}");
        assert!(seen.lines().any(|line| line == "PATH_EXTRA="), "{seen}");
        if std::env::var_os("PATH").is_some() {
            assert!(names.contains(&"PATH"), "{seen}");
        }
        if let Some(ours) = ours {
            assert!(!names.contains(&ours.as_str()), "{ours} was inherited: {seen}");
        }
        for name in names {
            // What the shell itself sets (PWD, SHLVL, `_`) may be there too.
            assert!(
                INHERITED_VARS.contains(&name) || ["FOO", "PATH_EXTRA", "PWD", "OLDPWD", "SHLVL", "_"].contains(&name),
                "{name} was inherited: {seen}"
            );
        }
    }
}
