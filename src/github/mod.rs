//! Everything that talks to GitHub or formats for it: the sticky pull request comment
//! ([`comment`], pure) and the REST client that finds, updates or creates it ([`client`]).
//!
//! Nothing here reads the environment or decides what to evaluate; [`crate::action`] does.

pub(crate) mod client;
pub(crate) mod comment;
