//! The GitHub Action: `mcp-eval action`, the container's entrypoint. It reads the action's
//! inputs and the workflow run from the environment (or the same settings as flags), decides
//! which layers are requested, runs the evaluation, and reports to the runner and to the pull
//! request.
//!
//! Code map: [`env_vars`] names every variable read, [`inputs`] merges flags and environment
//! into validated settings, [`trigger`] decides the layers (pure), [`workflow`] formats the
//! runner's workflow commands (pure), [`run`] ties them together. Talking to GitHub's API is
//! [`crate::github`]'s job.

pub mod env_vars;
pub mod inputs;
mod run;
pub mod trigger;
pub mod workflow;

pub use inputs::ActionArgs;
pub use run::{Console, LAYERS_AVAILABLE, run};
