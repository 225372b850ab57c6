//! Benchmark of the SSE parser (`mcp_eval::sse`): one 16 MiB event (a huge `tools/list`
//! result on a single `data:` line) fed in network-sized chunks, and a stream of many small
//! events. Prints MiB/s and wall time; run with `cargo bench --bench sse` (or `bench/sse.sh`).

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::time::Instant;

use mcp_eval::sse::Parser;

fn run(label: &str, stream: &[u8], chunk: usize, expected_events: usize) {
    let mut best = f64::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let mut parser = Parser::default();
        let mut events = 0;
        let mut bytes = 0;
        for piece in stream.chunks(chunk) {
            for event in parser.feed(piece) {
                events += 1;
                bytes += event.data.len();
            }
        }
        events += parser.finish().len();
        let seconds = started.elapsed().as_secs_f64();
        assert_eq!(events, expected_events, "{label}");
        assert!(bytes > 0);
        best = best.min(seconds);
    }
    let mib = stream.len() as f64 / (1024.0 * 1024.0);
    println!(
        "sse {label}: {mib:.1} MiB in {chunk}-byte chunks: {:.1} ms ({:.0} MiB/s, best of 3)",
        best * 1000.0,
        mib / best
    );
}

fn main() {
    let size = 16 * 1024 * 1024;
    let mut one_event = b"event: message\ndata: ".to_vec();
    one_event.extend(std::iter::repeat_n(b'x', size));
    one_event.extend_from_slice(b"\n\n");
    run("one 16 MiB event", &one_event, 16 * 1024, 1);
    run("one 16 MiB event", &one_event, 1024, 1);

    let small = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n";
    let count = size / small.len();
    let many: Vec<u8> = small.iter().copied().cycle().take(small.len() * count).collect();
    run("many small events", &many, 16 * 1024, count);
}
