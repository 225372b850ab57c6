//! The GitHub Action: `mcp-eval action`, the container's entrypoint. It reads the action's
//! inputs and the workflow run from the environment (or the same settings as flags), decides
//! which layers are requested, runs the evaluation, and reports to the runner and to the pull
//! request.
//!
//! Code map: [`trigger`] decides the layers (pure), [`workflow`] formats the runner's workflow
//! commands (pure), [`run`] ties them together; [`runner_host`] forwards a loopback `server-url`'s port to the runner's host
//! when the Action runs in a container. The inputs are resolved by
//! [`crate::settings`] (the same path as `mcp-eval run`); talking to GitHub's API is
//! [`crate::github`]'s job.

mod run;
pub(crate) mod runner_host;
pub(crate) mod trigger;
pub(crate) mod workflow;

pub(crate) use run::run;
