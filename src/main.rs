//! The `mcp-eval` binary: everything is in the library ([`mcp_eval::cli::main`]); this only exits
//! with the status it returns.

fn main() {
    std::process::exit(mcp_eval::cli::main());
}
