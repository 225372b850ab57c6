//! The stdio front end of the demo server (spec-notes §7): newline-delimited JSON-RPC on
//! stdin/stdout.
//!
//! Each request runs as its own task, so slow requests (progress, subscriptions) do not hold up
//! others. All output goes through one writer task, so lines never interleave. This module owns
//! framing, cancellation (`notifications/cancelled` for an in-flight request stops its
//! messages) and shutdown (return on stdin EOF after in-flight requests finish); protocol rules
//! live in [`super::core`]. stdout carries only MCP messages (unless a stdio break says
//! otherwise); nothing is logged.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::DemoConfig;
use super::core::{self, Reply};
use super::protocol::ServerState;

/// Serves MCP on this process's stdin and stdout. Returns when stdin reaches EOF.
///
/// The blocking standard streams are bridged to async pipes by a reader thread and a
/// blocking writer, so this works without tokio's `io-std` feature.
pub(crate) async fn serve_stdio(config: Arc<DemoConfig>) -> io::Result<()> {
    let (mut stdin_pipe, stdin_reader) = tokio::io::duplex(64 * 1024);
    let (chunk_sender, mut chunk_receiver) = mpsc::unbounded_channel::<Vec<u8>>();
    // A blocked read of stdin cannot be cancelled, so it gets a detached thread of its own.
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match std::io::Read::read(&mut stdin, &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n_read) => {
                    if chunk_sender.send(buffer[..n_read].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let stdin_pump = tokio::spawn(async move {
        while let Some(chunk) = chunk_receiver.recv().await {
            if stdin_pipe.write_all(&chunk).await.is_err() {
                break;
            }
        }
        // Dropping the pipe here is what turns stdin EOF into EOF for the server loop.
    });

    let (stdout_writer, mut stdout_pipe) = tokio::io::duplex(64 * 1024);
    let stdout_pump = tokio::spawn(async move {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n_read = tokio::io::AsyncReadExt::read(&mut stdout_pipe, &mut buffer).await?;
            if n_read == 0 {
                return Ok(());
            }
            let chunk = buffer[..n_read].to_vec();
            tokio::task::spawn_blocking(move || {
                let mut stdout = std::io::stdout().lock();
                std::io::Write::write_all(&mut stdout, &chunk)?;
                std::io::Write::flush(&mut stdout)
            })
            .await
            .map_err(io::Error::other)??;
        }
    });

    let served = serve_lines(config, BufReader::new(stdin_reader), stdout_writer).await;
    stdin_pump.abort();
    let flushed = stdout_pump.await.map_err(io::Error::other).and_then(|result| result);
    served.and(flushed)
}

/// Serves MCP on any line reader and writer (what [`serve_stdio`] does, testable in-process).
pub(crate) async fn serve_lines<R, W>(config: Arc<DemoConfig>, mut reader: R, writer: W) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let state = Arc::new(ServerState::new(config));
    let (sender, receiver) = mpsc::unbounded_channel::<String>();
    let framing = if state.breaks("x-1-content-length") {
        Framing::ContentLength
    } else if state.breaks("x-1-pretty") {
        Framing::Pretty
    } else if state.breaks("x-1-pretty-later") {
        Framing::PrettyLater
    } else if state.breaks("x-1-concatenated") {
        Framing::Concatenated
    } else if state.breaks("x-1-bom") {
        Framing::Bom
    } else {
        Framing::Lines
    };
    let writer_task = tokio::spawn(write_lines(receiver, writer, framing));
    let in_flight: Arc<Mutex<HashMap<String, Arc<AtomicBool>>>> = Arc::default();
    let mut requests = JoinSet::new();
    let mut line = Vec::new();
    if state.breaks("chaos-hang") {
        // Read everything, answer nothing; return on EOF.
        while reader.read_until(b'\n', &mut line).await? > 0 {
            line.clear();
        }
        drop(sender);
        return writer_task.await.unwrap_or(Ok(()));
    }
    let flood = state.breaks("chaos-flood").then(|| {
        let sender = sender.clone();
        tokio::spawn(async move {
            loop {
                for _ in 0..100 {
                    let noise = "chaos-flood: this line is not JSON-RPC ".repeat(2);
                    if sender.send(noise).is_err() {
                        return;
                    }
                }
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
        })
    });
    let huge = state.breaks("chaos-50mb");
    if state.breaks("chaos-stderr-flood") {
        // A detached thread: it ends with the process (or when stderr is closed).
        std::thread::spawn(|| {
            let chunk = "chaos-stderr-flood: the server writes this line to stderr without end\n"
                .repeat(super::chaos::FLOOD_STEP_BYTES / 70);
            while std::io::Write::write_all(&mut std::io::stderr(), chunk.as_bytes()).is_ok() {
                std::thread::sleep(super::chaos::FLOOD_PAUSE);
            }
        });
    }
    let endless = state.breaks("chaos-endless-tools-list");

    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        while requests.try_join_next().is_some() {}
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let (message, reply) = match serde_json::from_slice::<Value>(&line) {
            Ok(message) => {
                if cancel_in_flight(&state, &in_flight, &message) {
                    continue;
                }
                let reply = core::handle(&state, &message, None);
                (Some(message), reply)
            }
            Err(_) => (None, core::parse_error_reply()),
        };
        if reply.crash {
            // The break: stop serving on this request without answering it, as a server that
            // crashes on invalid tool arguments does (the process exits).
            drop(sender);
            return writer_task.await.unwrap_or(Ok(()));
        }
        if reply.messages.is_empty() {
            continue;
        }
        if state.breaks("x-6") && is_error_reply(&reply) {
            // The break: write the error, then stop serving.
            for outgoing in reply.messages {
                let _ = sender.send(outgoing.message.to_string());
            }
            drop(sender);
            return writer_task.await.unwrap_or(Ok(()));
        }
        let id_key = message.as_ref().and_then(|message| message.get("id")).map(Value::to_string);
        let cancelled = Arc::new(AtomicBool::new(false));
        if let Some(key) = &id_key {
            lock(&in_flight).insert(key.clone(), Arc::clone(&cancelled));
        }
        let sender = sender.clone();
        let in_flight = Arc::clone(&in_flight);
        let noisy = state.breaks("x-1");
        let request_method = message.as_ref().and_then(|message| message.get("method")).and_then(Value::as_str);
        let endless = endless && request_method == Some("tools/list");
        // `chaos-later-*`: every answer but `server/discover`'s spoiled one way.
        let later = core::later_way(&state).filter(|_| request_method != Some("server/discover"));
        requests.spawn(async move {
            for outgoing in reply.messages {
                if !outgoing.delay.is_zero() {
                    tokio::time::sleep(outgoing.delay).await;
                }
                if cancelled.load(Ordering::SeqCst) {
                    break;
                }
                let is_response = outgoing.message.get("method").is_none();
                if noisy && is_response {
                    let _ = sender.send("demo server: sending a response".to_string());
                }
                if endless && is_response {
                    let id = outgoing.message.get("id").cloned().unwrap_or(Value::Null);
                    let _ = sender.send(format!("{}{}", super::chaos::ENDLESS_LINE, super::chaos::endless_start(&id)));
                    continue;
                }
                if let (Some(way), true) = (later, is_response) {
                    let bytes = way.stdio(&outgoing.message);
                    let _ = sender.send(format!("{}{}", super::chaos::RAW_BYTES, STANDARD.encode(bytes)));
                    continue;
                }
                if huge && is_response {
                    let _ = sender.send(padded_response(&outgoing.message));
                    continue;
                }
                let _ = sender.send(outgoing.message.to_string());
            }
            if let Some(key) = id_key {
                lock(&in_flight).remove(&key);
            }
        });
    }

    if state.breaks("x-4") {
        std::future::pending::<()>().await;
    }
    // EOF: let in-flight requests finish (they are short), then flush and return.
    while requests.join_next().await.is_some() {}
    if let Some(flood) = flood {
        flood.abort();
        let _ = flood.await;
    }
    drop(sender);
    writer_task.await.unwrap_or(Ok(()))
}

/// The response to the same request as `message`, padded to a 50 MB line (`chaos-50mb`).
fn padded_response(message: &Value) -> String {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let mut line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","pad":""#);
    line.push_str(&"x".repeat(50 * 1_000_000));
    line.push_str(r#""}}"#);
    line
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Handles `notifications/cancelled` for a request that is still in flight; returns whether
/// the message was such a cancellation. Unknown ids are left to the core, which ignores them.
fn cancel_in_flight(state: &ServerState, in_flight: &Mutex<HashMap<String, Arc<AtomicBool>>>, message: &Value) -> bool {
    if message.get("method").and_then(Value::as_str) != Some("notifications/cancelled") || message.get("id").is_some() {
        return false;
    }
    let Some(request_id) = message.get("params").and_then(|params| params.get("requestId")) else {
        return false;
    };
    let Some(flag) = lock(in_flight).get(&request_id.to_string()).cloned() else {
        return false;
    };
    if !state.breaks("x-3") {
        flag.store(true, Ordering::SeqCst);
    }
    true
}

fn is_error_reply(reply: &Reply) -> bool {
    reply.last().is_some_and(|message| message.get("error").is_some())
}

/// How messages are written on stdout: newline-delimited JSON, or one of the ways the `x-1-*`
/// breaks get it wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// One message per line (spec-notes §7).
    Lines,
    /// `x-1-content-length`: `Content-Length: N\r\n\r\n` before each message, no newline after it.
    ContentLength,
    /// `x-1-pretty`: each message pretty-printed over several lines.
    Pretty,
    /// `x-1-pretty-later`: one line for the `server/discover` result (the one that carries
    /// `supportedVersions`), every other message pretty-printed over several lines.
    PrettyLater,
    /// `x-1-concatenated`: no newline after a message.
    Concatenated,
    /// `x-1-bom`: a UTF-8 byte order mark before the first message, then one message per line.
    Bom,
}

impl Framing {
    /// The bytes written for one message; `first` is true for the first thing written.
    fn frame(self, line: String, first: bool) -> String {
        match self {
            Framing::Lines => line + "\n",
            Framing::ContentLength => format!("Content-Length: {}\r\n\r\n{line}", line.len()),
            Framing::Pretty => match serde_json::from_str::<Value>(&line) {
                Ok(message) => serde_json::to_string_pretty(&message).unwrap_or(line) + "\n",
                Err(_) => line + "\n",
            },
            Framing::PrettyLater => match serde_json::from_str::<Value>(&line) {
                Ok(message) if message.pointer("/result/supportedVersions").is_none() => {
                    serde_json::to_string_pretty(&message).unwrap_or(line) + "\n"
                }
                _ => line + "\n",
            },
            Framing::Concatenated => line,
            Framing::Bom if first => format!("\u{feff}{line}\n"),
            Framing::Bom => line + "\n",
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut receiver: mpsc::UnboundedReceiver<String>,
    mut writer: W,
    framing: Framing,
) -> io::Result<()> {
    let mut first = true;
    while let Some(line) = receiver.recv().await {
        if let Some(start) = line.strip_prefix(super::chaos::ENDLESS_LINE) {
            // `chaos-endless-tools-list`: a line that never ends, until the reader goes away.
            writer.write_all(start.as_bytes()).await?;
            let entries = super::chaos::endless_entries();
            loop {
                writer.write_all(&entries).await?;
                writer.flush().await?;
                tokio::task::yield_now().await;
            }
        }
        if let Some(encoded) = line.strip_prefix(super::chaos::RAW_BYTES) {
            // A `chaos-later-*` answer: written as it is, whatever the framing.
            writer.write_all(&STANDARD.decode(encoded).unwrap_or_default()).await?;
            writer.flush().await?;
            first = false;
            continue;
        }
        writer.write_all(&super::chaos::wire(framing.frame(line, first))).await?;
        writer.flush().await?;
        first = false;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;
    use tokio::io::AsyncReadExt;

    fn request(method: &str, id: Value, params: Value) -> String {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string() + "\n"
    }

    /// Feeds `input` line by line (with `pause` before each), closes stdin, returns stdout.
    async fn run(breaks: &[&str], input: &[(Duration, String)]) -> Vec<String> {
        let (mut client_in, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, mut client_out) = tokio::io::duplex(64 * 1024);
        let config = Arc::new(DemoConfig::with_breaks(breaks.iter().copied()));
        let server = tokio::spawn(serve_lines(config, BufReader::new(server_in), server_out));
        for (pause, line) in input {
            tokio::time::sleep(*pause).await;
            // The server may have exited already (break x-6).
            let _ = client_in.write_all(line.as_bytes()).await;
        }
        drop(client_in);
        let mut output = String::new();
        client_out.read_to_string(&mut output).await.unwrap();
        server.await.unwrap().unwrap();
        output.lines().map(str::to_string).collect()
    }

    #[tokio::test]
    async fn keeps_serving_after_errors_and_ignores_unknown_cancellation() {
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": "never-sent"}})
        .to_string()
            + "\n";
        let lines = run(
            &[],
            &[
                (Duration::ZERO, request("foo/bar", json!(1), json!({}))),
                (Duration::ZERO, "{not json\n".to_string()),
                (Duration::ZERO, cancelled),
                (Duration::ZERO, request("server/discover", json!("two"), json!({}))),
            ],
        )
        .await;
        let messages: Vec<Value> = lines.iter().map(|line| serde_json::from_str(line).unwrap()).collect();
        assert_eq!(messages.len(), 3, "{lines:?}");
        assert_eq!(messages[0]["error"]["code"], -32601);
        assert_eq!(messages[1]["error"]["code"], -32700);
        assert_eq!(messages[2]["id"], "two");
    }

    #[tokio::test]
    async fn cancellation_stops_an_in_flight_request() {
        let mut progress = request("tools/call", json!(5), json!({"name": "test_progress"}));
        progress = progress.replace("\"_meta\":{", "\"_meta\":{\"progressToken\":\"tok\",");
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 5}})
        .to_string()
            + "\n";
        let lines = run(&[], &[(Duration::ZERO, progress.clone()), (Duration::from_millis(70), cancel.clone())]).await;
        assert!(!lines.is_empty() && lines.len() < 4, "{lines:?}");
        assert!(lines.iter().all(|line| !line.contains("\"result\"")), "{lines:?}");
        let lines = run(&["x-3"], &[(Duration::ZERO, progress), (Duration::from_millis(70), cancel)]).await;
        assert_eq!(lines.len(), 4, "{lines:?}");
    }

    #[tokio::test]
    async fn slow_tools_write_a_result_no_sooner_than_the_delay() {
        let call = request("tools/call", json!(6), json!({"name": "test_simple_text"}));
        let started = std::time::Instant::now();
        let lines = run(&["chaos-slow-tools"], &[(Duration::ZERO, call)]).await;
        assert!(started.elapsed() >= crate::demo::core::SLOW_TOOLS_DELAY, "answered after {:?}", started.elapsed());
        let reply: Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!((reply["id"].clone(), reply["result"]["resultType"].clone()), (json!(6), json!("complete")));
    }

    #[tokio::test]
    async fn stdio_breaks() {
        let discover = request("server/discover", json!(1), json!({}));
        let lines = run(&["x-1"], &[(Duration::ZERO, discover.clone())]).await;
        assert!(serde_json::from_str::<Value>(&lines[0]).is_err());
        let lines = run(
            &["x-6"],
            &[(Duration::ZERO, request("foo/bar", json!(1), json!({}))), (Duration::from_millis(20), discover)],
        )
        .await;
        assert_eq!(lines.len(), 1, "{lines:?}");
    }

    #[test]
    fn framing_breaks_write_each_message_their_way() {
        let message = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_string();
        let framed = |framing: Framing, first| framing.frame(message.clone(), first);
        assert_eq!(framed(Framing::Lines, true), format!("{message}\n"));
        assert_eq!(framed(Framing::ContentLength, true), format!("Content-Length: 36\r\n\r\n{message}"));
        assert!(framed(Framing::Pretty, true).lines().count() > 3);
        assert_eq!(framed(Framing::Concatenated, true), message);
        assert_eq!(framed(Framing::Bom, true), format!("\u{feff}{message}\n"));
        assert_eq!(framed(Framing::Bom, false), format!("{message}\n"));
    }
}
