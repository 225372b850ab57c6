//! Integration tests of the `mcp-eval` binary: one test binary, a module per feature.
//! Each test runs the real binary and asserts on its exit status and the files it writes.

mod action;
mod aimock;
mod breaks;
mod cli;
mod docs;
mod events;
mod golden;
mod golden_model;
mod https;
mod interop;
mod layer1;
mod layer2;
mod layer3;
mod migrate;
mod oauth;
mod public_reports;
mod replayed;
mod robustness;
mod sarif;
mod scan;
mod shards;
mod soak;
mod support;
mod traces;
mod unreadable;
