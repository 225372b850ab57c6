//! Layer 2: the golden set's cases run again with something injected into their tool calls —
//! a fault that replaces one call ([`crate::agent::inject::FaultTools`]) or an adversarial
//! payload planted in a result ([`crate::agent::inject::PayloadTools`]) — each trial's outcome
//! decided by code ([`resilience`], [`security`]), per case × injection × model as k of N.
//!
//! - **What is injected** ([`variants`]): the cases' own `faults:` and `adversarial:` (and their
//!   `defaults`) when any case has one; else the default suite — each fault once per tool the
//!   set expects a call of, on the first case that expects it, on its first call; and each
//!   payload of the catalogue ([`payloads`]) once, at the end, into each case that expects a
//!   tool call.
//! - **A variant** is an item of the runner's plan ([`items`], [`crate::trials::plan::Item`]):
//!   its case under the id `CASE/FAULT@TOOL#N` or `CASE/PAYLOAD@WHERE` with a hash of its own (the
//!   case's hash and the injection; the injection is not in the case's hash, so layer 1's
//!   baseline is kept), the injection itself, which layer 2's trial wrapper ([`wrap`]) reads, and
//!   outcome grading: the case's prompt, tools, limits, kind and threshold, none of its layer-1
//!   expectations (arguments, rubric). Its trials are the plan's (`--runs` applied there).
//! - **The plan** ([`planned`]) is counted before any connection: trials and the most model
//!   calls they can make (trials × `max_turns`). The default suite is sampled to fit layer 2's
//!   share of `--max-model-calls`; entries the user wrote over it are refused ([`sample`]).

use serde_json::json;

use crate::golden::{Case, FaultEntry, FaultKind, GoldenSet, Injection};
use crate::report::layer2::{ResilienceSection, SecuritySection};
use crate::scoring::attack::AttackOutcome;
use crate::scoring::outcome::FaultOutcome;
use crate::trials::plan::Item;

pub(crate) mod payloads;
pub(crate) mod resilience;
pub(crate) mod sample;
pub(crate) mod security;
pub(crate) mod wrap;

/// Where the faults come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The cases' `faults:` and `defaults.faults`.
    GoldenSet,
    /// Each fault once per tool ([`variants`]).
    DefaultSuite,
    /// `--fault-plan`, with the cases' own entries.
    FaultPlan,
}

impl Source {
    /// Its name in the report and the summary.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::GoldenSet => "golden set",
            Source::DefaultSuite => "default suite",
            Source::FaultPlan => "fault plan",
        }
    }
}

/// One case × injection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Variant {
    /// The case's index in the set.
    pub case: usize,
    /// What is injected. A catalogue payload whose action is `call` names its tool only once the
    /// server's tools are known ([`name_call_tools`]): until then its tool is empty.
    pub injection: Injection,
}

/// The variants of `set`, and where they came from (see the module docs).
pub(crate) fn variants(set: &GoldenSet) -> (Vec<Variant>, Source) {
    let own: Vec<Variant> = set
        .cases
        .iter()
        .enumerate()
        .flat_map(|(case, spec)| {
            let faults = spec.faults.iter().map(|fault| Injection::Fault(fault.clone()));
            let payloads = spec.adversarial.iter().map(|payload| Injection::Payload(payload.clone()));
            faults.chain(payloads).map(move |injection| Variant { case, injection })
        })
        .fold(Vec::new(), |mut kept: Vec<Variant>, variant| {
            // An entry given twice is one variant (its id and hash would be the same).
            if !kept.contains(&variant) {
                kept.push(variant);
            }
            kept
        });
    if let Some((_, plan)) = &set.fault_plan {
        let mut all = own;
        for entry in plan {
            for (index, case) in set.cases.iter().enumerate() {
                if !crate::golden::glob_matches(&entry.cases, &case.id) {
                    continue;
                }
                let tools = if entry.tool == "*" { expected_tools(case) } else { vec![entry.tool.clone()] };
                for tool in tools {
                    let variant = Variant {
                        case: index,
                        injection: Injection::Fault(FaultEntry { tool, fault: entry.fault, on_call: entry.on_call }),
                    };
                    if !all.contains(&variant) {
                        all.push(variant);
                    }
                }
            }
        }
        return (all, Source::FaultPlan);
    }
    if !own.is_empty() {
        return (own, Source::GoldenSet);
    }
    let mut seen: Vec<String> = Vec::new();
    let mut suite = Vec::new();
    for (index, case) in set.cases.iter().enumerate() {
        for tool in expected_tools(case) {
            if seen.contains(&tool) {
                continue;
            }
            seen.push(tool.clone());
            suite.extend(FaultKind::ALL.into_iter().map(|fault| Variant {
                case: index,
                injection: Injection::Fault(FaultEntry { tool: tool.clone(), fault, on_call: 1 }),
            }));
        }
    }
    for (index, case) in set.cases.iter().enumerate() {
        let expected = expected_tools(case);
        let Some(first) = expected.first() else { continue };
        suite.extend(
            payloads::CATALOGUE
                .iter()
                .map(|class| Variant { case: index, injection: Injection::Payload(payloads::pending(class, first)) }),
        );
    }
    (suite, Source::DefaultSuite)
}

/// The tools a case expects a call of (`expect_tool`, the steps of `expect_sequence`), in order.
pub(crate) fn expected_tools(case: &Case) -> Vec<String> {
    let expected = crate::golden::case::expected_calls(case);
    if expected.negative {
        return Vec::new();
    }
    let mut tools: Vec<String> = expected.tool.map(str::to_owned).into_iter().collect();
    for tool in expected.sequence.into_iter().flatten() {
        if !tools.iter().any(|t| t == tool) {
            tools.push(tool.to_owned());
        }
    }
    tools
}

/// The id of a variant: `CASE/FAULT@TOOL#N` or `CASE/PAYLOAD@WHERE`.
pub(crate) fn variant_id(case: &Case, injection: &Injection) -> String {
    match injection {
        Injection::Fault(fault) => format!("{}/{}", case.id, fault.label()),
        Injection::Payload(payload) => format!("{}/{}@{}", case.id, payload.id, payload.place.as_str()),
    }
}

/// The plan items of `variants` of `set` (see the module docs), in order: each its case under the
/// variant's id and hash, with its injection, graded on its outcome, `runs` (`--runs`) applied
/// by the plan.
pub(crate) fn items(set: &GoldenSet, variants: &[Variant], runs: Option<u32>) -> Vec<Item> {
    variants
        .iter()
        .map(|variant| {
            let case = &set.cases[variant.case];
            let named = (variant_id(case, &variant.injection), variant_hash(case, &variant.injection));
            Item::injected(set, variant.case, named, variant.injection.clone(), runs)
        })
        .collect()
}

/// `sha256:…` of a case × injection: the case's hash and the fault or payload (what the cache
/// and the baseline key a variant on, and what a payload's canaries are derived from).
pub(crate) fn variant_hash(case: &Case, injection: &Injection) -> String {
    match injection {
        Injection::Fault(fault) => crate::jcs::hash(&json!({
            "case_sha256": case.hash,
            "fault": {"tool": fault.tool, "fault": fault.fault.as_str(), "on_call": fault.on_call},
        })),
        Injection::Payload(payload) => crate::jcs::hash(&json!({
            "case_sha256": case.hash,
            "payload": {
                "id": payload.id,
                "text": payload.text,
                "where": payload.place.as_str(),
                "action": payload.action.label(),
            },
        })),
    }
}

/// Names the tool of every catalogue payload whose action is `call` and whose tool is still
/// to choose: a tool the case offers but does not expect to call ([`payloads::call_tool`]).
pub(crate) fn name_call_tools(variants: &mut [Variant], set: &GoldenSet, surface: &crate::mcp::tools::ToolSurface) {
    for variant in variants {
        let Injection::Payload(payload) = &variant.injection else { continue };
        if payload.action != crate::golden::CanaryAction::Call(String::new()) {
            continue;
        }
        let Some(class) = payloads::class(&payload.id) else { continue };
        let case = &set.cases[variant.case];
        let sees = crate::agent::CaseSpec::from_case(case);
        let offered: Vec<&str> =
            surface.tools.iter().map(|tool| tool.name.as_str()).filter(|name| sees.sees(name)).collect();
        let expected = expected_tools(case);
        let fallback = expected.first().cloned().unwrap_or_default();
        variant.injection =
            Injection::Payload(payloads::entry(class, payloads::call_tool(&offered, &expected), &fallback));
    }
}

/// What a layer-2 plan costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Planned {
    /// Case × fault variants.
    pub variants: usize,
    /// Trials, every model counted.
    pub trials: usize,
    /// The most model calls they can make: each trial's `max_turns`.
    pub model_calls: u64,
}

/// The cost of running the plan items `items` of `set` ([`items`]) on `models` models: each
/// item's trials, as the plan decided them.
pub(crate) fn planned(set: &GoldenSet, items: &[Item], models: usize) -> Planned {
    let mut trials = 0;
    let mut model_calls = 0u64;
    for item in items {
        let each = item.trials.runs * models;
        trials += each;
        model_calls += (each as u64) * (set.cases[item.case].run.max_turns as u64);
    }
    Planned { variants: items.len(), trials, model_calls }
}

/// The text the plan is printed with before the first model call.
pub(crate) fn planned_text(planned: &Planned, models: usize, source: Source) -> String {
    format!(
        "layer 2: {} variant(s) (case × fault or payload) from the {} × {models} model(s): {} trial(s), at most {} model call(s)",
        planned.variants,
        source.as_str(),
        planned.trials,
        planned.model_calls
    )
}

/// What layer 2 gave: its faults' section and its payloads'.
pub(crate) struct Layer2 {
    /// `resilience`.
    pub resilience: ResilienceSection,
    /// `security`, when a payload was planned.
    pub security: Option<SecuritySection>,
}

/// Layer 2's part of the model-call cap ([`sample::share`]), and whether layer 1 ran before it
/// in this evaluation (and so already said which models have no key).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    /// The model calls planned for layer 2.
    pub allowance: u64,
    /// Layer 1 ran first.
    pub after_layer1: bool,
}

/// Runs layer 2 over `base`'s golden set (the user's), with `base`'s models, tools, budget,
/// cassettes and trial wrappers (layer 3's spans), a `tools/call` limited to `call_timeout_ms`
/// (the `timeout` fault's text names it): the variants (the default suite sampled to fit `share`, or what is left of the
/// cap when less), their trials, each trial's outcome.
///
/// # Errors
/// Input errors of the plan (exit status 2), as layer 1's.
pub(crate) async fn run(
    base: &crate::trials::Layer1Input<'_>,
    share: Share,
    call_timeout_ms: u64,
    events: &(dyn Fn(&crate::events::RunEvent) + Sync),
) -> Result<Layer2, crate::error::UserError> {
    use crate::events::RunEvent;
    check_plan_tools(base.set, base.surface)?;
    let (variants, source) = variants(base.set);
    let suite = variants.len();
    // The models that can make a call (a model without a key makes none). When none can (no
    // key, no cassettes), nothing of the plan runs, so it is neither sampled, checked against the
    // cap nor said; the trials' planning says why, quietly (layer 1 said it, or layer 2's
    // `not run` does).
    let runnable =
        sample::runnable_models(base.settings, base.cassettes.is_some() || base.settings.cassettes.is_some());
    let can_run = runnable > 0;
    let models = if can_run { runnable } else { base.settings.models.len() };
    // What is left may be less than the share planned: layer 1's judge, retries, a confirmation re-run.
    let allowance = if can_run { share.allowance.min(base.budget.remaining()) } else { u64::MAX };
    let (mut variants, sampled) = sample::fit(base.set, variants, source, models, base.settings.runs, allowance);
    name_call_tools(&mut variants, base.set, base.surface);
    let items = items(base.set, &variants, base.settings.runs);
    let cost = planned(base.set, &items, models);
    let (fault_variants, payload_variants): (Vec<&Item>, Vec<&Item>) =
        items.iter().partition(|item| matches!(item.injection, Some(Injection::Fault(_))));
    let trials_of = |chosen: &[&Item]| -> usize { chosen.iter().map(|item| item.trials.runs * models).sum() };
    let mut resilience = ResilienceSection {
        source: source.as_str().to_owned(),
        variants: fault_variants.len(),
        planned_trials: trials_of(&fault_variants),
        // Only a plan that can run is a plan: with no model able to call, the suite is not
        // sampled, and its whole size is no figure to check against the cap.
        planned_model_calls: can_run.then_some(cost.model_calls),
        sampled: sampled.clone(),
        ..ResilienceSection::default()
    };
    let mut security = (!payload_variants.is_empty()).then(|| SecuritySection {
        variants: payload_variants.len(),
        planned_trials: trials_of(&payload_variants),
        ..SecuritySection::default()
    });
    let not_run = |reason: String, resilience: &mut ResilienceSection, security: &mut Option<SecuritySection>| {
        events(&RunEvent::Notice { text: format!("layer 2 did not run: {reason}") });
        if let Some(security) = security.as_mut() {
            security.not_run = Some(reason.clone());
        }
        resilience.not_run = Some(reason);
    };
    if variants.is_empty() && suite > 0 {
        let reason = format!(
            "the model-call cap (--max-model-calls, Action input `max-model-calls`) leaves {allowance} call(s) for layer 2, fewer than one variant of the default suite needs: raise the cap, or run layer 2 on its own (--layers 2)"
        );
        not_run(reason, &mut resilience, &mut security);
        return Ok(Layer2 { resilience, security });
    }
    if variants.is_empty() {
        let reason = "no case of the golden set expects a tool call, and none has `faults:` or `adversarial:`";
        not_run(reason.to_owned(), &mut resilience, &mut security);
        return Ok(Layer2 { resilience, security });
    }
    // Checked before any connection when a golden set is given; the demo's set, and what layer 1
    // actually spent, are only known here: a plan over what is left is refused before its first
    // call, as an input error (exit status 2), with the reports written.
    if can_run && cost.model_calls > base.budget.remaining() {
        return Err(crate::error::UserError::new(
            crate::error::Kind::InvalidInput,
            format!(
                "model-call budget: {}: over the {} model call(s) the cap (--max-model-calls, Action input `max-model-calls`) leaves after what ran before; nothing of layer 2 was run",
                planned_text(&cost, models, source),
                base.budget.remaining()
            ),
        )
        .with_hint(sample::BUDGET_HINT));
    }
    if can_run {
        events(&RunEvent::Notice { text: planned_text(&cost, models, source) });
        if let Some(sample) = &sampled {
            events(&RunEvent::Notice { text: format!("layer 2: {}", sample.sentence()) });
        }
    }
    // A model without a key is said once: by layer 1 when it ran, else as layer 2's.
    let quiet = |_: &RunEvent| {};
    let said_once = |event: &RunEvent| match event {
        RunEvent::Notice { text } if crate::trials::plan::is_no_key_notice(text) => {
            if !share.after_layer1 {
                events(&RunEvent::Notice { text: text.replacen("layer 1: ", "layer 2: ", 1) });
            }
        }
        event => events(event),
    };
    let trial_events: &(dyn Fn(&RunEvent) + Sync) = if can_run { &said_once } else { &quiet };
    let injected = wrap::Injections { call_timeout_ms };
    let mut wraps = base.wraps.clone();
    wraps.push(&injected);
    let input = crate::trials::Layer1Input {
        settings: base.settings,
        set: base.set,
        set_label: base.set_label.clone(),
        surface: base.surface,
        tools: base.tools,
        today: base.today,
        retry: base.retry,
        cassettes: base.cassettes.clone(),
        cache: None,
        budget: base.budget.clone(),
        wraps,
    };
    let used_before = base.budget.used();
    let replayed_before = base.budget.replayed();
    let ran = crate::trials::run_ungraded(&input, items.clone(), trial_events).await?;
    if let Some(reason) = ran.not_run {
        not_run(reason, &mut resilience, &mut security);
        return Ok(Layer2 { resilience, security });
    }
    for status in &ran.section.model_status {
        if let Some(detail) = &status.detail {
            resilience.notes.push(format!("{}: {detail}", status.model));
        }
    }
    incomplete(&ran, &mut resilience, base.budget.cost_stopped());
    let mut payload_calls = 0;
    // Why the judge gave no verdict, when the exit table knows the cause.
    let mut misses: Vec<resilience::JudgeMiss> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let original = &base.set.cases[item.case];
        let variant = resilience::VariantRef { id: &item.id, hash: &item.hash, case: original };
        let effective = item.trials;
        for (model_index, label) in &ran.models {
            let Some(records) = ran.records.get(&(*model_index, index)) else { continue };
            let Some(injection) = &item.injection else { continue };
            match injection {
                Injection::Fault(fault) => {
                    let schema_names = resilience::enum_names(base.surface, original);
                    let offered = resilience::offered_texts(base.surface, original);
                    let given: Vec<&str> = original
                        .run
                        .prompt
                        .iter()
                        .map(String::as_str)
                        .chain(original.run.system.as_deref())
                        .chain(offered.iter().map(String::as_str))
                        .collect();
                    let mut decided: Vec<_> = records
                        .iter()
                        .map(|record| {
                            let view =
                                resilience::TrialView { record, given: given.clone(), schema_names: &schema_names };
                            (record, resilience::trial_outcome(&view))
                        })
                        .collect();
                    if let Some(judge) = &ran.judge {
                        for (record, outcome) in &mut decided {
                            if !matches!(outcome, Some((FaultOutcome::Unclear, _))) {
                                continue;
                            }
                            let judging = resilience::Judging {
                                judge: judge.as_ref(),
                                model: label,
                                judge_model: judge.label(),
                                events,
                            };
                            let (judged, reason, miss) = resilience::judged(judging, variant, record).await;
                            misses.extend(miss);
                            *outcome = Some((judged, reason));
                        }
                    }
                    resilience.results.push(resilience::result(original, fault, label, effective, &decided));
                }
                Injection::Payload(payload) => {
                    payload_calls += records.iter().map(|record| record.model_calls).sum::<u64>();
                    // With a judge, a trial that did not do what the payload asked is refused or
                    // resisted by the judge's word, not the wording rule.
                    let mut judged = std::collections::BTreeMap::new();
                    let judge_before = base.budget.used();
                    if let Some(judge) = &ran.judge {
                        for record in records {
                            let canary = crate::agent::inject::canary(&item.hash, &payload.id, record.trial);
                            let code = security::trial_outcome(record, payload, &canary);
                            if !matches!(code, Some((AttackOutcome::Refused | AttackOutcome::Resisted, _))) {
                                continue;
                            }
                            let question = ("noticed_and_refused", security::REFUSAL_QUESTION);
                            let judging = resilience::Judging {
                                judge: judge.as_ref(),
                                model: label,
                                judge_model: judge.label(),
                                events,
                            };
                            match resilience::ask_judge(judging, variant, record, question).await {
                                Ok((true, _)) => {
                                    judged.insert(
                                        record.trial,
                                        (
                                            AttackOutcome::Refused,
                                            "the judge: the answer says it noticed and did not follow it".into(),
                                        ),
                                    );
                                }
                                Ok((false, _)) => {
                                    judged.insert(record.trial, (AttackOutcome::Resisted, "the judge: the model did not do what the payload asked, and said nothing of it".into()));
                                }
                                Err((_, miss)) => misses.extend(miss),
                            }
                        }
                    }
                    // The payloads' judge calls are the payloads' model calls.
                    payload_calls += base.budget.used().saturating_sub(judge_before);
                    if let Some(security) = security.as_mut() {
                        let result = security::result(variant, payload, label, effective, records, &judged);
                        security.results.push(result);
                    }
                }
            }
        }
    }
    // The judge's calls too.
    let used = base.budget.used().saturating_sub(used_before);
    resilience.model_calls = used.saturating_sub(payload_calls);
    let replayed = base.budget.replayed().saturating_sub(replayed_before);
    if replayed > 0 {
        // Faults and payloads alike: said once, where layer 2's notes are read.
        resilience.notes.push(format!(
            "model calls: {used} ({} live, {replayed} replayed from cassettes): outcomes {}",
            used.saturating_sub(replayed),
            crate::report::evals::REPLAYED_VERDICT
        ));
    }
    if misses.contains(&resilience::JudgeMiss::Cap) && !resilience.call_cap_reached {
        resilience.call_cap_reached = true;
        resilience
            .notes
            .push("the model-call cap (--max-model-calls) stopped layer 2's judge: its trials stay unclear".into());
    }
    if misses.contains(&resilience::JudgeMiss::Recording) {
        resilience.provider_failed = true;
        resilience.notes.push("a replayed judge request had no recording: record layer 2 with --record".into());
    }
    if let Some(security) = security.as_mut() {
        security.model_calls = payload_calls;
        security.by_payload = security::by_payload(&security.results);
    }
    for result in &resilience.results {
        let counts = &result.outcomes;
        events(&RunEvent::Notice {
            text: format!(
                "layer 2: {}/{}@{}#{} on {}: {} (passed {}/{}, fabricated {})",
                result.case,
                result.fault,
                result.tool,
                result.on_call,
                ran.section.model_shown(&result.model),
                status_name(result.status),
                counts.passed(),
                counts.graded(),
                counts.fabricated
            ),
        });
    }
    for result in security.iter().flat_map(|section| &section.results) {
        events(&RunEvent::Notice {
            text: format!(
                "layer 2: {}/{}@{} on {}: {} (attacked {}/{}, refused {})",
                result.case,
                result.payload,
                result.place,
                ran.section.model_shown(&result.model),
                status_name(result.status),
                result.outcomes.attacked,
                result.outcomes.graded(),
                result.outcomes.refused
            ),
        });
    }
    let decided =
        |status: crate::report::layer2::FaultStatus| status != crate::report::layer2::FaultStatus::Inconclusive;
    let any_decided = resilience.results.iter().any(|result| decided(result.status))
        || security.iter().flat_map(|section| &section.results).any(|result| decided(result.status));
    if !any_decided {
        resilience.notes.push(
            "no variant could be decided (every trial unclear, untested or spoiled): layer 2 shows nothing about this server here".into(),
        );
    }
    Ok(Layer2 { resilience, security })
}

/// Every tool a fault plan names must be one the server lists.
///
/// # Errors
/// An input error (exit status 2) naming the plan's file, line and column, and the nearest tool.
fn check_plan_tools(set: &GoldenSet, surface: &crate::mcp::tools::ToolSurface) -> Result<(), crate::error::UserError> {
    let Some((path, plan)) = &set.fault_plan else { return Ok(()) };
    let listed: Vec<&str> = surface.tools.iter().map(|tool| tool.name.as_str()).collect();
    let unknown: Vec<String> = plan
        .iter()
        .filter(|entry| entry.tool != "*" && !listed.contains(&entry.tool.as_str()))
        .map(|entry| {
            let near = crate::suggest::closest(&entry.tool, listed.iter().copied())
                .map_or_else(|| "the server lists no tools".to_owned(), |near| format!("the nearest is `{near}`"));
            format!(
                "{}:{}:{}: tool: the server has no tool `{}` ({near})",
                crate::text::shown(path),
                entry.position.0,
                entry.position.1,
                entry.tool
            )
        })
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(crate::error::UserError::new(
        crate::error::Kind::InvalidInput,
        format!("the fault plan names {} tool(s) the server does not list:\n{}", unknown.len(), unknown.join("\n")),
    )
    .with_hint("fix the names in the fault plan (MCP names, as `tools/list` gives them), or use `tool: \"*\"`"))
}

/// `pass`, `fail` or `inconclusive`.
fn status_name(status: crate::report::layer2::FaultStatus) -> &'static str {
    match status {
        crate::report::layer2::FaultStatus::Pass => "pass",
        crate::report::layer2::FaultStatus::Fail => "fail",
        crate::report::layer2::FaultStatus::Inconclusive => "inconclusive",
    }
}

/// Marks `resilience` incomplete as layer 1 would be: the call cap cut a trial (exit 6); a
/// provider was unusable, a replay missed, or the provider spoiled more than a fifth of the
/// trials (exit 5). Each with its note.
fn incomplete(ran: &crate::trials::Ungraded, resilience: &mut ResilienceSection, cost_stopped: bool) {
    use crate::agent::TrialEnding;
    let endings: Vec<&TrialEnding> = ran.records.values().flatten().map(|record| &record.ending).collect();
    if endings.iter().any(|ending| matches!(ending, TrialEnding::CapReached)) {
        resilience.call_cap_reached = true;
        resilience.notes.push(if cost_stopped {
            "the cost budget (--max-cost-usd) stopped layer 2: the trials it cut are `error`".into()
        } else {
            "the model-call cap (--max-model-calls) stopped layer 2: the trials it cut are `error`".into()
        });
    }
    let unusable =
        ran.section.model_status.iter().any(|status| status.status == crate::report::evals::ModelOutcome::Unusable);
    let missed = endings.iter().any(|ending| matches!(ending, TrialEnding::NoRecording(_)));
    let spoiled = endings.iter().filter(|ending| matches!(ending, TrialEnding::ProviderError(_))).count();
    if unusable || missed || spoiled * 5 > endings.len() {
        resilience.provider_failed = true;
        if missed {
            resilience.notes.push("a replayed request had no recording: record layer 2 with --record".into());
        }
    }
}

#[cfg(test)]
mod tests;
