//! The face every layer shows the driver ([`Layer`]): it plans from the settings (or says why
//! it does not run), runs over the open session into the event sink, keeping its section in
//! [`Sections`] as soon as it is done, and gives its partial section when a signal or a panic
//! stops the run ([`Parts`]). Layers 0, 1 and 2 run on the session, in [`SESSION_LAYERS`]'s
//! order; layer 3 runs on no session: it reads the sink ([`super::layer3`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::AtomicU8;

use crate::error::UserError;
use crate::golden::GoldenSet;
use crate::mcp::era::{Connected, Target};
use crate::mcp::evidence::Redactor;
use crate::report::evals::EvalsSection;
use crate::report::layer2::ResilienceSection;
use crate::report::model::{CheckResult, ServerSection};
use crate::settings::Settings;

use super::limits::Limits;
use super::{LAYERS_AVAILABLE, RunEvent, SHARD_LAYER0_NOTE};

/// Where the run's events go: the caller's, the `--events` file, layer 3 and the driver's notes.
pub(super) type Sink<'a> = &'a (dyn Fn(&RunEvent) + Sync);

/// A layer running on the session.
pub(super) type Running<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// What every layer runs with.
pub(super) struct Context<'a> {
    /// The run's settings.
    pub settings: &'a Settings,
    /// The user's golden set, when one is given.
    pub golden: Option<&'a GoldenSet>,
    /// The server under test.
    pub target: &'a Target,
    /// The run's secrets, to redact.
    pub redactor: &'a Redactor,
    /// The layers that run, in order ([`plan_layers`]).
    pub ran: &'a [u8],
    /// What layers 1 and 2 share: the budget, the cassettes' failure flag, layer 3's footprint.
    pub limits: Limits<'a>,
    /// The event sink.
    pub events: Sink<'a>,
}

/// What the layers finished, each kept as soon as it is done: a signal or a panic later keeps it.
#[derive(Default)]
pub(super) struct Sections {
    /// What layer 0 has said so far (the era, the sizes of the lists): a signal that arrives
    /// before its outcome keeps them in the report instead of "era unknown".
    pub known: Mutex<ServerSection>,
    /// Layer 0's outcome as soon as it is graded, so a signal during layer 1 or the session's
    /// shutdown (a stdio server can take seconds to exit) keeps every check.
    pub layer0: Mutex<Option<crate::conformance::Layer0Result>>,
    /// Layer 1's finished runs, while it runs.
    pub progress: crate::trials::Progress,
    /// Layer 1's section (gate included), or the input error that stopped it.
    pub layer1: Mutex<Option<Result<EvalsSection, UserError>>>,
    /// Layer 2's sections, or the input error that stopped it.
    pub layer2: Mutex<Option<Result<crate::faults::Layer2, UserError>>>,
    /// Each session layer's own wall time, once it finished (layer 0's is what the summary's
    /// `N checks in T` says).
    pub durations: Mutex<[Option<u64>; 3]>,
    /// The layer running now (0 until layer 1 starts): what a panic's `INTERNAL` row names.
    pub running: AtomicU8,
}

/// The parts of the report the layers give when a signal or a panic stopped the run.
pub(super) struct Parts {
    /// The server section: the target label and transport, and what layer 0 found.
    pub server: ServerSection,
    /// Layer 0's checks, when they were graded.
    pub checks: Vec<CheckResult>,
    /// Layer 1's finished trials.
    pub evals: Option<EvalsSection>,
    /// Layer 2's section: cut, its trials not kept.
    pub resilience: Option<ResilienceSection>,
    /// The layers the report names.
    pub layers: Vec<u8>,
}

/// The face of a layer that runs on the session.
pub(super) trait Layer: Sync {
    /// Its number: 0, 1 or 2.
    fn number(&self) -> u8;

    /// Why it does not run although asked for, decided from the settings before connecting
    /// (said in a notice); `None`: it runs.
    fn plan(&self, _settings: &Settings, _golden: Option<&GoldenSet>) -> Option<&'static str> {
        None
    }

    /// Whether it runs now, after the layers before it on this session; `false` keeps in
    /// `sections` the section that says why not (no `layer_started` then).
    fn ready(&self, _cx: &Context<'_>, _sections: &Sections) -> bool {
        true
    }

    /// Runs over the session, sending its events to `cx.events` and keeping its section in
    /// `sections` when it is done.
    fn run<'a>(&'a self, cx: &'a Context<'a>, connected: &'a Connected, sections: &'a Sections) -> Running<'a>;

    /// Puts into `parts` what it had finished when `what` (a signal's name, a panic) stopped the
    /// run; whether the report still names the layer.
    fn cut(&self, sections: &Sections, what: &str, parts: &mut Parts) -> bool;
}

/// The layers that run on the session, in their order.
pub(super) const SESSION_LAYERS: [&dyn Layer; 3] =
    [&super::layer0::Layer0, &super::layer1::Layer1, &super::layer2::Layer2];

/// Which layers run, and why some do not.
pub(super) struct LayerPlan {
    /// The layers that run, in order.
    pub ran: Vec<u8>,
    /// Why layer 1 does not run although it was asked for, when it does not.
    pub layer1_missing: Option<&'static str>,
    /// Why layer 2 does not run although it was asked for, when it does not.
    pub layer2_missing: Option<&'static str>,
    /// The note of a shard after the first: layer 0 runs in shard 1 only.
    pub shard_note: Option<String>,
}

/// Why a layer of trials (1 or 2) does not run for want of its inputs: no golden set, or no
/// model (`no_model` is that reason). With `--demo` alone the settings hold the demo's own.
pub(super) fn missing_set_or_model(
    settings: &Settings,
    golden: Option<&GoldenSet>,
    no_model: &'static str,
) -> Option<&'static str> {
    if golden.is_none() {
        Some("no golden set was given (--golden-set, Action input `golden-set`, config `golden_set`)")
    } else if settings.layer1.models.is_empty() {
        Some(no_model)
    } else {
        None
    }
}

/// Decides which of `layers` run (the caller resolved `auto`), sending a notice for each asked
/// for that does not.
pub(super) fn plan_layers(
    settings: &Settings,
    layers: &[u8],
    golden: Option<&GoldenSet>,
    events: Sink<'_>,
) -> LayerPlan {
    let mut missing: [Option<&'static str>; 3] = [None; 3];
    for layer in SESSION_LAYERS.iter().filter(|layer| layers.contains(&layer.number())) {
        if let Some(reason) = layer.plan(settings, golden) {
            events(&RunEvent::Notice { text: format!("layer {} did not run: {reason}", layer.number()) });
            missing[usize::from(layer.number())] = Some(reason);
        }
    }
    // With `--shard`, layer 0 runs in shard 1 only (`merge` takes its checks from there).
    let shard_note = settings
        .layer1
        .shard
        .filter(|shard| shard.index > 1 && layers.contains(&0))
        .map(|shard| format!("{SHARD_LAYER0_NOTE} (this is shard {}/{})", shard.index, shard.count));
    if let Some(note) = &shard_note {
        events(&RunEvent::Notice { text: note.clone() });
    }
    let ran: Vec<u8> = layers
        .iter()
        .copied()
        .filter(|layer| LAYERS_AVAILABLE.contains(layer))
        .filter(|layer| missing.get(usize::from(*layer)).is_none_or(Option::is_none))
        .filter(|layer| !(*layer == 0 && shard_note.is_some()))
        .collect();
    LayerPlan { ran, layer1_missing: missing[1], layer2_missing: missing[2], shard_note }
}
