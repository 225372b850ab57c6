//! Layer 2's trial wrapper ([`Injections`], a [`TrialWrap`] over the runner's events): each trial
//! of a plan item that carries an injection ([`crate::trials::plan::Item::injected`]) gets it —
//! the fault layer ([`crate::agent::inject::FaultTools`]) or the payload layer
//! ([`crate::agent::inject::PayloadTools`], its canary derived from the item's hash and the
//! trial) — around the tools the loop calls. A trial with none is left as it is.

use crate::agent::inject::{self, FaultTools, PayloadTools};
use crate::agent::tools::ToolExecutor;
use crate::agent::wrap::{Place, TrialSite, TrialWrap, WrappedTrial};
use crate::golden::Injection;

/// What layer 2 gives the runner: the injection of each trial is the plan's, read from the
/// trial's site.
pub(crate) struct Injections {
    /// The per-call limit of `tools/call` (`--timeout-seconds`) in milliseconds, which the
    /// `timeout` fault's text names.
    pub call_timeout_ms: u64,
}

impl TrialWrap for Injections {
    fn place(&self) -> Place {
        Place::OverEvents
    }

    fn open<'a>(&'a self, site: TrialSite<'a>) -> Box<dyn WrappedTrial + 'a> {
        Box::new(Injected { call_timeout_ms: self.call_timeout_ms, site })
    }
}

/// One trial's injection.
struct Injected<'a> {
    call_timeout_ms: u64,
    site: TrialSite<'a>,
}

impl WrappedTrial for Injected<'_> {
    fn tools<'s>(&'s self, inner: Box<dyn ToolExecutor + 's>) -> Box<dyn ToolExecutor + 's> {
        match self.site.injection {
            Some(Injection::Fault(fault)) => {
                Box::new(FaultTools::new(inner, fault, self.call_timeout_ms, self.site.events))
            }
            Some(Injection::Payload(payload)) => {
                let canary = inject::canary(self.site.case_sha256, &payload.id, self.site.trial.trial);
                Box::new(PayloadTools::new(inner, payload, canary, self.site.events))
            }
            None => inner,
        }
    }
}
