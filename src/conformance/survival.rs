//! A server that dies on a probe: every probe that sends a malformed or unusual request (the
//! E-* probes, the HTTP rules' header and endpoint probes, the stdio rules' unknown method
//! and removed `ping`) sends it through [`probe`], which notices when the server
//! stopped answering right after it.
//!
//! The rule: the probe got no answer at all (refused, closed, exited) and an ordinary request
//! sent next on the same connection got none either. Then the probe's row fails, whatever its
//! level (a server must survive a malformed request), with both exchanges as evidence, and the
//! checks that got no answer afterwards are blocked by it ([`block_after_stop`]).
//!
//! Probes go at once (no slower than without the check): when several were under way as the
//! server died, the one named is the first sent; a probe that never reached the server (refused
//! a connection, or written to a process that had exited) was sent after it had gone, and names
//! nothing (its row is blocked like the rest).

use serde_json::json;

use super::BLOCKED_PREFIX;
use super::context::Context;
use super::finding::{Finding, Outcome};
use crate::mcp::client::Client;
use crate::mcp::era::Era;
use crate::mcp::exchange::{Exchange, Failure, Outgoing};

/// The server stopped answering after a probe.
#[derive(Debug, Clone)]
pub(crate) struct Stopped {
    /// The probe, in words: `E-8's probe, an unparsable body (…)`.
    pub after: String,
    /// The failure of the probe's row.
    pub finding: Finding,
    /// The probe's place in the order they were sent: the first is named (see the module).
    pub rank: u64,
}

impl Context {
    /// Sends `outgoing`, the probe of row `id` (`what`, in words), on `client`: see [`probe`].
    pub(crate) async fn probe(&self, client: &Client, id: &'static str, what: &str, outgoing: Outgoing) -> Exchange {
        probe(self, client, id, what, outgoing).await
    }
}

/// Sends `outgoing`, the probe of row `id` (`what`, in words), on `client`, and returns its
/// exchange. When the server stopped answering right after it (see the module), records that in
/// [`Context::stopped`]; the first probe to see it is the one named.
async fn probe(ctx: &Context, client: &Client, id: &'static str, what: &str, outgoing: Outgoing) -> Exchange {
    let rank = ctx.probes_sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let gone = |client: &Client| match client.connection() {
        crate::mcp::client::Connection::Stdio(stdio) => stdio.exit_reason().is_some(),
        crate::mcp::client::Connection::Http(_) => false,
    };
    let gone_before = gone(client);
    let exchange = client.send(outgoing).await;
    // A probe that never reached the server (refused a connection, or the process had exited
    // before it was written) was sent after it had gone: it killed nothing.
    let undelivered = gone_before
        || match &exchange.failure {
            Some(Failure::Connect(_)) => true,
            Some(Failure::Exited(detail)) => detail.starts_with("cannot write to stdin"),
            _ => false,
        };
    let outranked = || crate::mcp::sync::lock(&ctx.stopped).as_ref().is_some_and(|stopped| stopped.rank < rank);
    if !exchange.unanswered() || undelivered || outranked() {
        return exchange;
    }
    let (method, ordinary) = ordinary(ctx, client);
    let next = client.send(ordinary).await;
    if !next.unanswered() {
        return exchange;
    }
    let mut finding = Finding::broken(
        id,
        format!(
            "the server stopped answering after {what}: the probe got no answer ({}), and an ordinary `{method}` sent next got none either ({}); a server must survive a malformed request (answer it with an error, never crash): the checks after it are blocked",
            exchange.describe(),
            next.describe()
        ),
    )
    .with(&exchange)
    .with(&next);
    finding.crash = true;
    let mut stopped = crate::mcp::sync::lock(&ctx.stopped);
    if stopped.as_ref().is_none_or(|earlier| rank < earlier.rank) {
        *stopped = Some(Stopped { after: format!("{id}'s probe, {what}"), finding, rank });
    }
    drop(stopped);
    exchange
}

/// An ordinary request for `client`: `server/discover` on a 2026-07-28 connection, `tools/list`
/// on a legacy server's own session.
fn ordinary(ctx: &Context, client: &Client) -> (&'static str, Outgoing) {
    if ctx.era == Era::Legacy && std::ptr::eq(client, &*ctx.client) {
        ("tools/list", ctx.request("tools/list", json!({})))
    } else {
        ("server/discover", super::probes::modern("server/discover", json!({})))
    }
}

/// After the server stopped answering (a probe killed it, see [`probe`]), the probe's row gets
/// its failure, and the findings that got no answer ([`Finding::unanswered`]) are blocked by
/// that probe: `not_applicable` with a reason that names it, never a misleading reason of their
/// own (or a failure of their own rule). Findings not applicable for a reason of their own keep
/// it.
pub(crate) fn block_after_stop(ctx: &Context, groups: &mut Vec<(Vec<Finding>, u64)>) {
    let Some(stopped) = crate::mcp::sync::lock(&ctx.stopped).clone() else { return };
    let reason = format!("{BLOCKED_PREFIX}the server stopped answering after {}", stopped.after);
    for finding in groups.iter_mut().flat_map(|(findings, _)| findings.iter_mut()) {
        if finding.unanswered && !finding.crash {
            finding.outcome = Outcome::NotApplicable;
            finding.message.clone_from(&reason);
        }
    }
    groups.push((vec![stopped.finding], 0));
}
