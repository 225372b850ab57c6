//! The exit statuses of `mcp-eval`, in one table (documented in the README).

/// No MUST check failed.
pub const PASSED: i32 = 0;
/// At least one MUST check failed (or `--require-era` rejected a legacy server).
pub const CHECK_FAILED: i32 = 1;
/// Invalid input: a flag or a file; the message names it and the fix.
pub const INVALID_INPUT: i32 = 2;
/// The server under test could not be reached or started.
pub const UNREACHABLE: i32 = 3;
/// Our own environment failed (cannot write the reports, no runtime, …).
pub const ENVIRONMENT: i32 = 4;
/// Interrupted by SIGINT (128 + 2); the reports were written.
pub const INTERRUPTED_SIGINT: i32 = 130;
/// Interrupted by SIGTERM (128 + 15); the reports were written.
pub const INTERRUPTED_SIGTERM: i32 = 143;
