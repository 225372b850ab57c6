//! The plan of a layer-1 run, built once before any model call: the models that can run (and
//! why the others cannot), the tool specs each case offers each model's wire, the rubric judge
//! and the embeddings model, the cache keys and the verdicts reused, and the list of trials.
//! [`super::execute`] runs the plan; [`super::finish`] turns its records into the report.
//!
//! A plan runs a list of [`Item`]s: layer 1's are the set's cases as they are ([`Item::cases`]),
//! graded by their expectations; a layer that injects something into the trials (layer 2) gives
//! its own ([`Item::injected`]): a case under an injection, graded on its outcome alone. Each
//! item carries its number of trials, decided here once (`--runs` applied, [`scaled`]): every
//! later reader — the work, the cache key, the report, layer 2's results — takes it from there.
//!
//! A confirmation re-run is a second plan, scoped to the worsened case × model pairs
//! ([`Scope::only`]), built from the same input.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::caller::LiveModel;
use super::semantic;
use super::{Layer1Input, no_key_detail};
use crate::agent::{ArgumentMismatch, CaseSpec, ValidateArguments};
use crate::calibration::CalibrationFile;
use crate::error::{Kind, UserError};
use crate::events::RunEvent;
use crate::golden::{GoldenSet, Injection, Trials};
use crate::mcp::tools::ToolSurface;
use crate::providers::ToolSpec;
use crate::providers::names::{NameRule, ToolNames};
use crate::providers::openai;
use crate::providers::schema::{self, ArgumentValidator, Family, Validation};
use crate::report::evals::{EvalResult, EvalsSection, GoldenSetInfo, ModelOutcome, ModelStatus, ShardInfo};
use crate::scoring::judge;
use crate::settings::layer1::{Api, Layer1Settings, ModelRef, Shard};

/// Which case × model pairs a plan covers: the shard's slice (`--shard`), and for a
/// confirmation re-run only the worsened pairs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    /// The slice of the case × model list, and how many models were given.
    pub shard: Option<(Shard, usize)>,
    /// Only these (model index, case index) pairs, when set.
    pub only: Option<BTreeSet<(usize, usize)>>,
    /// For a confirmation re-run: the trials each (model index, case index) pair ran in the
    /// first pass. Its trials' events name them numbered on after those (trial N + 1, …), as the
    /// report's pooled traces do; the trials keep their own numbers (1, …) everywhere else, so the
    /// cassette keys do not change.
    pub numbered_after: BTreeMap<(usize, usize), usize>,
}

impl Scope {
    /// True when the pair (case `case`, model `model`) is in the plan.
    pub(crate) fn contains(&self, case: usize, model: usize) -> bool {
        self.shard.is_none_or(|(shard, models)| shard.contains(case, model, models))
            && self.only.as_ref().is_none_or(|only| only.contains(&(model, case)))
    }
}

/// How the trials of a plan item are graded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grading {
    /// By what the case expects: its calls and their argument matchers (those that need a
    /// model too), its rubric (the judge). Layer 1's items.
    Expectations,
    /// By the trial's outcome alone, which the layer that planned the item decides on the
    /// records ([`super::run_ungraded`]): none of the case's expectations is read — no
    /// argument matcher, no rubric judge.
    Outcome,
}

/// One item of a plan: a case of the set, as it is or with an injection, under an id and a hash
/// of its own, with its number of trials and how they are graded. The unit the plan's work, the
/// records (by model index, item index) and the report are counted in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    /// The case's index in the golden set.
    pub case: usize,
    /// The trials' case id (their events, cassette keys and canaries name it).
    pub id: String,
    /// `sha256:…` the trials are keyed on (the verdict cache; a payload's canaries).
    pub hash: String,
    /// What a layer injects into the trials (its trial wrapper reads it from the trial's site).
    pub injection: Option<Injection>,
    /// How the trials are graded.
    pub grading: Grading,
    /// How many trials run and how many must pass (`--runs` applied).
    pub trials: Trials,
}

impl Item {
    /// Layer 1's items: each case of `set` as it is, graded by its expectations, `runs`
    /// (`--runs`) applied. Item `i` is case `i`.
    pub(crate) fn cases(set: &GoldenSet, runs: Option<u32>) -> Vec<Item> {
        set.cases
            .iter()
            .enumerate()
            .map(|(index, case)| Item {
                case: index,
                id: case.id.clone(),
                hash: case.hash.clone(),
                injection: None,
                grading: Grading::Expectations,
                trials: scaled(case.trials, runs),
            })
            .collect()
    }

    /// Case `case` of `set` with `injection`, under the `id` and `hash` its layer gives it,
    /// graded on its outcome; `runs` (`--runs`) applied to the case's trials.
    pub(crate) fn injected(
        set: &GoldenSet,
        case: usize,
        (id, hash): (String, String),
        injection: Injection,
        runs: Option<u32>,
    ) -> Item {
        Item {
            case,
            id,
            hash,
            injection: Some(injection),
            grading: Grading::Outcome,
            trials: scaled(set.cases[case].trials, runs),
        }
    }
}

/// A case's trials (`own`) with `--runs N` (`runs`): N trials, a hard case's threshold N and a
/// soft one's scaled to N, rounded up, at least 1; without it, the case's own. The one place the
/// number of trials of a case is decided.
fn scaled(own: Trials, runs: Option<u32>) -> Trials {
    let Some(runs) = runs.and_then(|runs| usize::try_from(runs).ok()) else { return own };
    let runs = runs.max(1);
    let threshold = if own.hard { runs } else { (own.threshold * runs).div_ceil(own.runs).clamp(1, runs) };
    Trials { runs, threshold, hard: own.hard }
}

/// One model ready to run.
pub(crate) struct Ready {
    /// Its index in the settings' models.
    pub index: usize,
    /// `PROVIDER:MODEL`.
    pub label: String,
    /// Its wire.
    pub api: Api,
    /// Its caller (budget, retries, refusals).
    pub caller: Arc<LiveModel>,
}

/// The tools each case offers each model, by (model index, case index).
pub(crate) type Offered = BTreeMap<(usize, usize), Arc<[ToolSpec]>>;

/// One unit of work: the trials (1-based) of item `case` on model `model` that run one after
/// another — one trial, or every trial of a case with `sequential_runs`.
#[derive(Debug, Clone)]
pub(crate) struct Work {
    /// The model's index in the settings.
    pub model: usize,
    /// The item's index in the plan (for layer 1, the case's index in the golden set).
    pub case: usize,
    /// The trials, in order.
    pub trials: Vec<usize>,
}

/// What a run does, decided before it starts.
pub(crate) struct Plan<'a> {
    /// What it runs on.
    pub input: &'a Layer1Input<'a>,
    /// The section so far: the golden set, the models and their status, the notes.
    pub section: EvalsSection,
    /// What it runs: the items, each with its trials.
    pub items: Vec<Item>,
    /// The items' cases as the agent loop reads them (item order); `deferred` says why one
    /// cannot run.
    pub specs: Vec<CaseSpec>,
    /// The models that can run.
    pub ready: Vec<Ready>,
    /// The tools each item offers each model, by (model index, item index): one shared list per
    /// model and distinct set of visible tools ([`shared_lists`]), not a copy per case.
    pub offered: Offered,
    /// The rubric judge, when one can run.
    pub judge: Option<Arc<LiveModel>>,
    /// Each item's rubric, when it is graded by one (item order).
    pub rubrics: Vec<Option<judge::Rubric>>,
    /// The judge's calibration file and its shown path (`--judge-calibration`).
    pub calibration: Option<(CalibrationFile, String)>,
    /// The models of `embedding` and `judge` argument matchers.
    pub semantic: semantic::Semantic,
    /// Arguments checked against each tool's own `inputSchema`.
    pub validators: SchemaValidators,
    /// The cache key of every pair looked up, by (model index, item index).
    pub keys: BTreeMap<(usize, usize), crate::cache::CacheKey>,
    /// The verdicts reused from the cache, by (model index, item index): not run.
    pub reused: BTreeMap<(usize, usize), EvalResult>,
    /// The pairs covered.
    pub scope: Scope,
    /// Every trial to run, in order (models, then cases, then trials).
    pub work: Vec<Work>,
    /// The layer whose trials these are, as its notices name it (`layer 1`; `layer 2` when
    /// layer 2 runs its variants through [`super::run_ungraded`]).
    pub layer: &'static str,
}

/// A plan, or the section of a run that cannot start (no model given, none can run).
pub(crate) enum Planned<'a> {
    /// Trials to run.
    Run(Box<Plan<'a>>),
    /// Nothing runs: the section says why (`layer1_not_run`).
    NotRun(Box<EvalsSection>),
}

impl<'a> Plan<'a> {
    /// Plans the `items` × models pairs of `scope` over `input`, sending the planning's
    /// notices to `events`.
    ///
    /// # Errors
    /// Input errors (exit status 2): a tool name the server does not list, a case that offers
    /// more tools than a provider accepts, an unreadable calibration file.
    pub(crate) fn build(
        input: &'a Layer1Input<'a>,
        items: Vec<Item>,
        scope: Scope,
        events: &(dyn Fn(&RunEvent) + Sync),
    ) -> Result<Planned<'a>, UserError> {
        check_tool_names(input.set, &items, input.surface)?;
        let mut specs: Vec<CaseSpec> = items
            .iter()
            .map(|item| CaseSpec { id: item.id.clone(), ..CaseSpec::from_case(&input.set.cases[item.case]) })
            .collect();
        let mut section = first_section(input);
        if input.settings.models.is_empty() {
            section.layer1_not_run = Some("no model was given (--model PROVIDER:MODEL, Action input `models`)".into());
            return Ok(Planned::NotRun(Box::new(section)));
        }
        let ready = ready_models(input, &mut section, events);
        let offered = offer_tools(input, &ready, &specs, &mut section)?;
        if ready.is_empty() {
            section.layer1_not_run = Some(format!("no model could run ({})", why_none_ran(&section)));
            return Ok(Planned::NotRun(Box::new(section)));
        }
        let judge = rubric_judge(input, &mut section);
        let rubrics: Vec<Option<judge::Rubric>> = items
            .iter()
            .map(|item| match item.grading {
                Grading::Expectations => input.set.cases[item.case].rubric.clone(),
                Grading::Outcome => None,
            })
            .collect();
        // Read even when no judge runs, so a bad file is an input error either way.
        let calibration = match &input.settings.judge_calibration {
            Some(path) => Some((crate::calibration::load(path)?, crate::text::shown(path))),
            None => None,
        };
        judge_notes(input, judge.as_deref(), calibration.as_ref(), &mut section);
        if judge.is_some() {
            for (spec, rubric) in specs.iter_mut().zip(&rubrics) {
                if rubric.is_some() {
                    spec.deferred = None;
                }
            }
        }
        let embedder = embeddings_model(input, &mut section);
        defer_unresolvable(&mut specs, input.set, &items, embedder.is_some(), judge.is_some());
        matcher_notes(&graded_cases(input.set, &items), embedder.as_ref(), judge.as_deref(), &mut section);
        let semantic = semantic::Semantic { embedder, judge: judge.clone().map(semantic::ArgumentJudge::new) };
        let mut plan = Plan {
            input,
            section,
            items,
            specs,
            ready,
            offered,
            judge,
            rubrics,
            calibration,
            semantic,
            validators: SchemaValidators::new(input.surface),
            keys: BTreeMap::new(),
            reused: BTreeMap::new(),
            scope,
            work: Vec::new(),
            layer: "layer 1",
        };
        plan.look_up_verdicts(events);
        plan.work = plan.trials();
        Ok(Planned::Run(Box::new(plan)))
    }

    /// The number of trials of item `item` (its index), as the plan decided it.
    pub(crate) fn trials_of(&self, item: usize) -> usize {
        self.items[item].trials.runs
    }

    /// The cases that can run: not deferred (set order).
    fn runnable(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.specs.len()).filter(|&index| self.specs[index].deferred.is_none())
    }

    /// Looks up the verdict of every runnable pair in the cache (when one is used): one held for
    /// exactly this case, tool surface, model, endpoint, trials and server key is reused, and
    /// its pair does not run. A cache that cannot be read is a notice.
    fn look_up_verdicts(&mut self, events: &(dyn Fn(&RunEvent) + Sync)) {
        let input = self.input;
        let Some(cache) = &input.cache else { return };
        let mut found = Vec::new();
        for model in &self.ready {
            let Some(def) = input.settings.provider(&input.settings.models[model.index]) else { continue };
            for case_index in self.runnable().filter(|&case_index| self.scope.contains(case_index, model.index)) {
                let spec = &self.specs[case_index];
                let item = &self.items[case_index];
                let case = &input.set.cases[item.case];
                let tools =
                    crate::cache::tool_fingerprint(input.surface.tools.iter().filter(|tool| spec.sees(&tool.name)));
                let key = crate::cache::CacheKey::new(&crate::cache::KeyParts {
                    case_sha256: &item.hash,
                    tools: &tools,
                    model: &model.label,
                    wire: wire_name(def.api),
                    base_url: &def.base_url,
                    runs: self.trials_of(case_index),
                    server_key: cache.server_key.as_deref(),
                    judge: self.judge.as_ref().filter(|_| self.rubrics[case_index].is_some()).map(|judge| {
                        format!(
                            "{}|samples {}|prompt v{}",
                            judge.label(),
                            input.settings.judge_samples,
                            judge::JUDGE_PROMPT_VERSION
                        )
                    }),
                    matchers: matcher_key(case, input.settings),
                });
                found.push(((model.index, case_index), key));
            }
        }
        for (pair, key) in found {
            match cache.store.get(&key) {
                Ok(Some((mut eval, from))) => {
                    eval.cached = Some(from);
                    self.reused.insert(pair, eval);
                }
                Ok(None) => {}
                Err(warning) => events(&RunEvent::Notice { text: format!("layer 1: {warning}") }),
            }
            self.keys.insert(pair, key);
        }
    }

    /// Every trial to run: the runnable pairs of the scope whose verdict is not reused, each
    /// trial its own unit of work, but the trials of a `sequential_runs` case one unit.
    fn trials(&self) -> Vec<Work> {
        let mut work = Vec::new();
        for model in &self.ready {
            for case in self.runnable() {
                if !self.scope.contains(case, model.index) || self.reused.contains_key(&(model.index, case)) {
                    continue;
                }
                let spec = &self.specs[case];
                let trials: Vec<usize> = (1..=self.trials_of(case)).collect();
                if spec.run.sequential {
                    work.push(Work { model: model.index, case, trials });
                } else {
                    work.extend(trials.into_iter().map(|trial| Work { model: model.index, case, trials: vec![trial] }));
                }
            }
        }
        work
    }
}

/// Every tool name of the items' cases must be one the server lists.
fn check_tool_names(set: &GoldenSet, items: &[Item], surface: &ToolSurface) -> Result<(), UserError> {
    let listed: Vec<&str> = surface.tools.iter().map(|tool| tool.name.as_str()).collect();
    let named: Vec<crate::golden::NamedTool> = items
        .iter()
        .map(|item| &set.cases[item.case])
        .flat_map(|case| {
            case.tools.iter().map(|tool| crate::golden::NamedTool { case: case.id.clone(), tool: tool.clone() })
        })
        .collect();
    let unknown = crate::golden::unknown_names(&set.path, &named, &listed);
    if unknown.is_empty() {
        return Ok(());
    }
    let count = unknown.len();
    let lines: Vec<String> = unknown.into_iter().map(|problem| problem.into_error().to_string()).collect();
    Err(UserError::new(
        Kind::InvalidInput,
        format!("the golden set names {count} tool(s) the server does not list:\n{}", lines.join("\n")),
    )
    .with_hint("fix the names in the golden set (MCP names, as `tools/list` gives them)"))
}

/// The section's head: the golden set, the models asked for, the shard and the tool surface.
fn first_section(input: &Layer1Input<'_>) -> EvalsSection {
    let set = input.set;
    EvalsSection {
        golden_set: Some(GoldenSetInfo {
            path: input.set_label.clone(),
            sha256: set.hash.clone(),
            cases: set.cases.len(),
            today: Some(input.today.to_string()),
            timezone: Some(set.timezone().name().to_owned()),
        }),
        models: input.settings.models.iter().map(ModelRef::label).collect(),
        shard: input.settings.shard.map(|shard| ShardInfo { index: shard.index, count: shard.count }),
        // The tools it saw: a later run given this report as `--baseline`, and the merge job of
        // shards, diff them against their own.
        tool_surface: serde_json::from_str(&input.surface.canonical_text()).ok(),
        ..EvalsSection::default()
    }
}

/// The models that can run; each other model gets its status (no provider, no API key, a
/// provider that cannot be used) in `section` and an event.
fn ready_models(
    input: &Layer1Input<'_>,
    section: &mut EvalsSection,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Vec<Ready> {
    let mut ready = Vec::new();
    for (index, model) in input.settings.models.iter().enumerate() {
        let label = model.label();
        let Some(def) = input.settings.provider(model) else {
            let detail = format!("no provider `{}` is defined", model.provider);
            events(&RunEvent::ProviderUnusable { model: label.clone(), detail: detail.clone() });
            section.model_status.push(ModelStatus {
                model: label,
                status: ModelOutcome::Unusable,
                detail: Some(detail),
                replayed: false,
            });
            continue;
        };
        match input.settings.model_source(def, model, input.cassettes.as_ref()) {
            Ok(Some(source)) => {
                let caller = Arc::new(LiveModel::new(label.clone(), source, input.budget.clone(), input.retry));
                ready.push(Ready { index, label, api: def.api, caller });
            }
            Ok(None) => {
                let detail = no_key_detail(def.api_key_env.as_deref().unwrap_or_default());
                events(&RunEvent::Notice { text: no_key_notice(&label, &detail) });
                section.model_status.push(ModelStatus {
                    model: label,
                    status: ModelOutcome::NoApiKey,
                    detail: Some(detail),
                    replayed: false,
                });
            }
            Err(error) => {
                let detail = format!("cannot use the provider: {error}");
                events(&RunEvent::ProviderUnusable { model: label.clone(), detail: detail.clone() });
                section.model_status.push(ModelStatus {
                    model: label,
                    status: ModelOutcome::Unusable,
                    detail: Some(detail),
                    replayed: false,
                });
            }
        }
    }
    ready
}

/// What each case offers each model's wire, by (model index, case index): the schemas lowered
/// for the provider, with a note for each change a model reads and for tool names rewritten.
///
/// # Errors
/// A case that would offer an OpenAI model more tools than it accepts.
fn offer_tools(
    input: &Layer1Input<'_>,
    ready: &[Ready],
    specs: &[CaseSpec],
    section: &mut EvalsSection,
) -> Result<Offered, UserError> {
    let mut offered = BTreeMap::new();
    let mut lowered_notes = BTreeSet::new();
    for model in ready {
        let family = match model.api {
            Api::Anthropic => Family::Anthropic,
            Api::OpenAi | Api::Replay => Family::OpenAi,
        };
        let mut lowered: BTreeMap<&str, ToolSpec> = BTreeMap::new();
        for tool in &input.surface.tools {
            let result = schema::lower(&tool.input_schema, family);
            // Dropped keywords (`$defs` once inlined, `x-*` annotations) and an added empty
            // `properties` change nothing a model reads: only the other changes are worth a note.
            for note in result
                .notes
                .iter()
                .filter(|note| !note.starts_with("removed `") && !note.starts_with("the root had no `properties`"))
            {
                lowered_notes.insert(format!("{}: tool `{}`: {note}", model.label, tool.name));
            }
            lowered.insert(&tool.name, ToolSpec { input_schema: result.schema, ..ToolSpec::from(tool) });
        }
        if let Some(note) = renamed_note(input.surface, model) {
            section.layer1_notes.push(note);
        }
        for ((case_index, case), tools) in specs.iter().enumerate().zip(shared_lists(&lowered, specs)) {
            if model.api == Api::OpenAi && tools.len() > openai::MAX_TOOLS {
                return Err(UserError::new(
                    Kind::InvalidInput,
                    format!(
                        "case `{}` would offer {} tools to {}; OpenAI accepts at most {}",
                        case.id,
                        tools.len(),
                        model.label,
                        openai::MAX_TOOLS
                    ),
                )
                .with_hint("narrow what the model sees with the case's `tools:` field (or `defaults.tools`), e.g. `tools: [\"search_*\"]`"));
            }
            offered.insert((model.index, case_index), tools);
        }
    }
    section.layer1_notes.extend(lowered_notes);
    Ok(offered)
}

/// The tools of `lowered` each case of `specs` sees, in case order. Cases that see the same tools
/// (most do: every tool, or the set's `defaults.tools`) share one list, so a plan holds a list
/// per distinct set of visible tools, not a copy of every schema per case (a thousand cases of a
/// server with a dozen tools held some 25 MB of copies).
fn shared_lists(lowered: &BTreeMap<&str, ToolSpec>, specs: &[CaseSpec]) -> Vec<Arc<[ToolSpec]>> {
    let mut lists: BTreeMap<Vec<&str>, Arc<[ToolSpec]>> = BTreeMap::new();
    specs
        .iter()
        .map(|case| {
            let names: Vec<&str> = lowered.keys().copied().filter(|name| case.sees(name)).collect();
            let list = lists.entry(names).or_insert_with_key(|names| {
                names.iter().filter_map(|name| lowered.get(name).cloned()).collect::<Vec<_>>().into()
            });
            Arc::clone(list)
        })
        .collect()
}

/// The note on the tool names rewritten for `model`'s provider, when any are.
fn renamed_note(surface: &ToolSurface, model: &Ready) -> Option<String> {
    let rule = if model.api == Api::Anthropic { NameRule::ANTHROPIC } else { NameRule::OPENAI };
    let names = ToolNames::new(surface.tools.iter().map(|tool| tool.name.as_str()), rule).ok()?;
    let renamed: Vec<String> =
        names.renamed().iter().map(|rename| format!("`{}` → `{}`", rename.mcp, rename.wire)).collect();
    (!renamed.is_empty()).then(|| {
        format!(
            "{}: {} tool name(s) rewritten for the provider (the model sees the new names): {}",
            model.label,
            renamed.len(),
            renamed.join(", ")
        )
    })
}

/// Why no model could run, one part per model (`label: no API key`, `label: detail`).
fn why_none_ran(section: &EvalsSection) -> String {
    let why: Vec<String> = section
        .model_status
        .iter()
        .map(|status| match status.status {
            ModelOutcome::NoApiKey => format!("{}: no API key", status.model),
            _ => format!("{}: {}", status.model, status.detail.as_deref().unwrap_or("unusable")),
        })
        .collect();
    why.join("; ")
}

/// The rubric judge (`--judge-model`), when one is given and can run; a note says why a given
/// one cannot.
fn rubric_judge(input: &Layer1Input<'_>, section: &mut EvalsSection) -> Option<Arc<LiveModel>> {
    let model = input.settings.judge_model.as_ref()?;
    let label = model.label();
    let def = input.settings.provider(model)?;
    match input.settings.model_source(def, model, input.cassettes.as_ref()) {
        Ok(Some(source)) => Some(Arc::new(LiveModel::new(label, source, input.budget.clone(), input.retry))),
        Ok(None) => {
            let how = def.api_key_env.as_deref().map(|variable| format!(" ({})", no_key_detail(variable)));
            section.layer1_notes.push(format!(
                "the judge {label} did not run: no API key{}; rubrics are not graded",
                how.unwrap_or_default()
            ));
            None
        }
        Err(error) => {
            section.layer1_notes.push(format!("the judge {label} cannot be used: {error}; rubrics are not graded"));
            None
        }
    }
}

/// The notes on the rubric judge: flags that go unused without one, and which judge grades
/// rubrics, how, and whether its pass rates are calibrated.
fn judge_notes(
    input: &Layer1Input<'_>,
    judge: Option<&LiveModel>,
    calibration: Option<&(CalibrationFile, String)>,
    section: &mut EvalsSection,
) {
    let settings = input.settings;
    if judge.is_none() && settings.judge_samples > 1 {
        section.layer1_notes.push(format!(
            "--judge-samples {} is not used: no judge model grades rubrics (--judge-model)",
            settings.judge_samples
        ));
    }
    let Some(judge) = judge else {
        if let Some((_, name)) = calibration {
            section.layer1_notes.push(format!("--judge-calibration {name} is not used: no judge graded rubrics"));
        }
        return;
    };
    let calibration_note = match calibration {
        None => {
            "; judge pass rates are uncalibrated (no --judge-calibration file; `mcp-eval judge calibrate` measures one)"
                .to_owned()
        }
        Some((file, name)) => match crate::calibration::mismatch(file, judge.label()) {
            Some(reason) => format!("; judge pass rates are uncalibrated: {name}: {reason}"),
            None if file.tpr + file.tnr <= 1.0 => format!(
                "; judge pass rates are not corrected: {name} measured this judge no better than chance (TPR {:.2}, TNR {:.2}, n = {} + {})",
                file.tpr, file.tnr, file.positives, file.negatives
            ),
            None => format!(
                "; judge pass rates are also given Rogan–Gladen corrected with {name} (TPR {:.2}, TNR {:.2}, n = {} + {}, measured {}){}",
                file.tpr,
                file.tnr,
                file.positives,
                file.negatives,
                file.measured_at,
                if crate::calibration::same_rubrics(file, input.set) {
                    ""
                } else {
                    "; ⚠️ it was measured on other rubrics than this golden set's: measure again"
                }
            ),
        },
    };
    let judged_by_itself = settings.models.iter().any(|model| model.label() == judge.label());
    section.layer1_notes.push(format!(
        "rubrics judged by {} ({} sample(s) per trial, majority vote; judge prompt v{}){}{calibration_note}",
        judge.label(),
        settings.judge_samples,
        judge::JUDGE_PROMPT_VERSION,
        if judged_by_itself {
            "; ⚠️ it also is a model under test: it judges its own trials (--allow-self-judge)"
        } else {
            ""
        }
    ));
}

/// The embeddings model of `embedding` argument matchers (`--embedding-model`), when one is
/// given and can run; a note says why a given one cannot.
fn embeddings_model(input: &Layer1Input<'_>, section: &mut EvalsSection) -> Option<semantic::Embedder> {
    let model = input.settings.embedding_model.as_ref()?;
    let label = model.label();
    let Some(def) = input.settings.provider(model) else {
        section
            .layer1_notes
            .push(format!("the embeddings model {label} cannot be used: no provider `{}`", model.provider));
        return None;
    };
    match input.settings.embed_source(def, model, input.cassettes.as_ref()) {
        Ok(Some(source)) => {
            let recorded_as = if def.api == Api::Replay { model.model.clone() } else { label };
            Some(semantic::Embedder::new(recorded_as, source, input.budget.clone(), input.retry))
        }
        Ok(None) => {
            let how = def
                .api_key_env
                .as_deref()
                .map(|variable| format!(" ({})", no_key_detail(variable)))
                .unwrap_or_default();
            section.layer1_notes.push(format!("the embeddings model {label} did not run: no API key{how}"));
            None
        }
        Err(error) => {
            section.layer1_notes.push(format!("the embeddings model {label} cannot be used: {error}"));
            None
        }
    }
}

/// The cases of the items graded by their expectations (item order).
fn graded_cases<'s>(set: &'s GoldenSet, items: &[Item]) -> Vec<&'s crate::golden::Case> {
    items.iter().filter(|item| item.grading == Grading::Expectations).map(|item| &set.cases[item.case]).collect()
}

/// Defers (skips, with the reason) each item graded by its case's expectations whose `embedding`
/// or `judge` matchers need a model that cannot run.
fn defer_unresolvable(specs: &mut [CaseSpec], set: &GoldenSet, items: &[Item], embedder: bool, judge: bool) {
    for (spec, item) in specs.iter_mut().zip(items) {
        if item.grading != Grading::Expectations {
            continue;
        }
        let case = &set.cases[item.case];
        let uses = |mode: &str| case.semantic.iter().any(|matcher| matcher.mode == mode);
        if spec.deferred.is_some() {
            continue;
        }
        if uses("embedding") && !embedder {
            spec.deferred =
                Some("its `embedding` matchers need the embeddings model, which cannot run (see the notes)".into());
        } else if uses("judge") && !judge {
            spec.deferred = Some("its `judge` matchers need the judge model, which cannot run (see the notes)".into());
        }
    }
}

/// The notes on which models grade the `embedding` and `judge` matchers of `cases`, when they
/// have any.
fn matcher_notes(
    cases: &[&crate::golden::Case],
    embedder: Option<&semantic::Embedder>,
    judge: Option<&LiveModel>,
    section: &mut EvalsSection,
) {
    let uses_mode = |mode: &str| cases.iter().flat_map(|case| &case.semantic).any(|matcher| matcher.mode == mode);
    if let Some(embedder) = embedder.filter(|_| uses_mode("embedding")) {
        section.layer1_notes.push(format!(
            "`embedding` matchers graded by {} (the cosine of the two texts' embeddings against the matcher's threshold, default {})",
            embedder.label(),
            crate::scoring::matchers::EMBEDDING_THRESHOLD
        ));
    }
    if let Some(judge) = judge.filter(|_| uses_mode("judge")) {
        section.layer1_notes.push(format!(
            "`judge` matchers graded by {} (argument prompt v{}; `unknown` counts as a failure)",
            judge.label(),
            crate::scoring::semantic::ARGUMENT_JUDGE_PROMPT_VERSION
        ));
    }
}

/// What a case's verdict depends on through its `embedding` and `judge` matchers (the
/// embeddings model and its endpoint; the judge and the argument prompt version), for the
/// verdict cache key; `None` when it has none.
fn matcher_key(case: &crate::golden::Case, settings: &Layer1Settings) -> Option<String> {
    let uses = |mode: &str| case.semantic.iter().any(|matcher| matcher.mode == mode);
    let mut parts = Vec::new();
    if uses("embedding")
        && let Some(model) = &settings.embedding_model
    {
        let endpoint = settings.provider(model).map(|def| def.base_url.as_str()).unwrap_or_default();
        parts.push(format!("embedding {}@{endpoint}", model.label()));
    }
    if uses("judge")
        && let Some(model) = &settings.judge_model
    {
        parts.push(format!(
            "judge {}|argument prompt v{}",
            model.label(),
            crate::scoring::semantic::ARGUMENT_JUDGE_PROMPT_VERSION
        ));
    }
    (!parts.is_empty()).then(|| parts.join("|"))
}

/// `openai`, `anthropic` or `replay`: the wire in a cache key.
fn wire_name(api: Api) -> &'static str {
    match api {
        Api::OpenAi => "openai",
        Api::Anthropic => "anthropic",
        Api::Replay => "replay",
    }
}

/// Checks arguments against each tool's original `inputSchema`, compiled once, the first time
/// a call of that tool is checked: a server of thousands of tools costs no compile for the
/// tools no model calls. A schema that cannot be compiled checks nothing: the call is sent,
/// and layer 0 reports the schema.
pub(crate) struct SchemaValidators {
    validators: BTreeMap<String, (serde_json::Value, std::sync::OnceLock<ArgumentValidator>)>,
}

impl SchemaValidators {
    fn new(surface: &ToolSurface) -> Self {
        Self {
            validators: surface
                .tools
                .iter()
                .map(|tool| (tool.name.clone(), (tool.input_schema.clone(), std::sync::OnceLock::new())))
                .collect(),
        }
    }

    /// How many schemas were compiled so far.
    #[cfg(test)]
    fn compiled(&self) -> usize {
        self.validators.values().filter(|(_, validator)| validator.get().is_some()).count()
    }
}

impl ValidateArguments for SchemaValidators {
    fn validate(&self, tool: &str, arguments: &serde_json::Value) -> Result<(), ArgumentMismatch> {
        let validator = self
            .validators
            .get(tool)
            .map(|(schema, validator)| validator.get_or_init(|| ArgumentValidator::new(schema)));
        match validator.map(|validator| validator.validate(arguments)) {
            Some(Validation::Invalid(problems)) => Err(ArgumentMismatch(problems)),
            _ => Ok(()),
        }
    }
}

/// The notice of a model that is not run for want of a key, as layer 1 says it.
pub(crate) fn no_key_notice(label: &str, detail: &str) -> String {
    format!("layer 1: {label}: not run, no API key: {detail}")
}

/// Whether `text` is a [`no_key_notice`]: how a later run of the same models tells the notice
/// layer 1 already gave, to say it once.
pub(crate) fn is_no_key_notice(text: &str) -> bool {
    text.starts_with("layer 1: ") && text.contains(": not run, no API key: ")
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_no_key_notice_is_known_by_the_test_layer_2_uses_to_say_it_once() {
        let notice = super::no_key_notice("openai:gpt-4.1-mini", "set OPENAI_API_KEY");
        assert!(super::is_no_key_notice(&notice), "{notice}");
        assert!(!super::is_no_key_notice("layer 1: openai:gpt-4.1-mini: unusable"));
    }
    use super::*;

    #[test]
    fn runs_given_on_the_command_line_scale_a_soft_threshold_and_set_a_hard_one() {
        let soft = crate::golden::Trials::new(5, Some(4), false);
        assert_eq!(scaled(soft, Some(10)), crate::golden::Trials { runs: 10, threshold: 8, hard: false });
        assert_eq!(scaled(soft, Some(3)).threshold, 3, "rounded up");
        assert_eq!(scaled(soft, Some(1)).threshold, 1);
        assert_eq!(scaled(soft, None), soft, "without --runs the case's own");
        let hard = crate::golden::Trials::new(5, None, true);
        assert_eq!(scaled(hard, Some(3)), crate::golden::Trials { runs: 3, threshold: 3, hard: true });
    }

    /// `--runs` on a resolved case: the trials the plan gives scoring (moved from
    /// `trials::assemble`, which wrote them into the case's JSON before scoring took the typed case,
    /// then from `golden::Trials`, before the plan decided them).
    #[test]
    fn runs_override_scales_a_soft_threshold_and_sets_a_hard_one() {
        let with_runs = |case: &serde_json::Value, runs| super::scaled(crate::golden::Trials::of_resolved(case), runs);
        let soft = serde_json::json!({"kind": "soft", "runs": 5, "pass_threshold": 4});
        let wider = with_runs(&soft, Some(10));
        assert_eq!((wider.runs, wider.threshold), (10, 8));
        let hard = serde_json::json!({"kind": "hard", "runs": 5, "pass_threshold": 5});
        assert_eq!(with_runs(&hard, Some(3)).threshold, 3);
        assert_eq!(with_runs(&soft, None), crate::golden::Trials::of_resolved(&soft));
        assert_eq!((with_runs(&soft, None).runs, with_runs(&soft, None).threshold), (5, 4));
    }

    #[test]
    fn a_tool_schema_is_compiled_when_a_call_of_it_is_first_checked() {
        let tool = crate::mcp::tools::ToolView::for_tests;
        let surface = ToolSurface {
            tools: vec![
                tool("a", serde_json::json!({"type": "object", "required": ["x"]})),
                tool("b", serde_json::json!({"type": "object"})),
            ],
            skipped: 0,
        };
        let check = SchemaValidators::new(&surface);
        assert_eq!(check.compiled(), 0, "nothing is compiled before a call");
        assert!(check.validate("a", &serde_json::json!({})).is_err_and(|why| why.to_string().contains('x')));
        assert!(check.validate("a", &serde_json::json!({"x": 1})).is_ok());
        assert_eq!(check.compiled(), 1, "only the tool called, once");
        assert!(check.validate("unlisted", &serde_json::json!({})).is_ok());
    }

    #[test]
    fn cases_that_see_the_same_tools_share_one_list_of_them() {
        let set = crate::golden::load::parse(
            std::path::Path::new("set.yaml"),
            "version: 1\ncases:\n  - {id: a, prompt: one, expect_tool: echo}\n  - {id: b, prompt: two, expect_tool: echo}\n  - {id: c, prompt: three, expect_tool: echo, tools: [\"e*\"]}\n  - {id: d, prompt: four, expect_tool: echo, tools: [echo]}\n",
        )
        .expect("a valid set");
        let specs: Vec<CaseSpec> = set.cases.iter().map(CaseSpec::from_case).collect();
        let tool = |name: &str| ToolSpec { name: name.into(), description: None, input_schema: serde_json::json!({}) };
        let lowered: BTreeMap<&str, ToolSpec> = [("echo", tool("echo")), ("list", tool("list"))].into_iter().collect();
        let lists = shared_lists(&lowered, &specs);
        let names = |list: &Arc<[ToolSpec]>| list.iter().map(|tool| tool.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            lists.iter().map(names).collect::<Vec<_>>(),
            [vec!["echo", "list"], vec!["echo", "list"], vec!["echo"], vec!["echo"]]
        );
        assert!(Arc::ptr_eq(&lists[0], &lists[1]) && Arc::ptr_eq(&lists[2], &lists[3]), "one list per distinct set");
        assert!(!Arc::ptr_eq(&lists[0], &lists[2]));
    }
}
