//! Layer 1's gate within a run: the verdict cache it reads and writes ([`cache_use`]), its
//! comparison with the stored baseline and the gate (`--fail-on-evals`), the cases a
//! confirmation re-run repeats, numbered on after the first trials, and how the re-runs are
//! pooled ([`regression_gate`], [`confirm_pairs`], [`pool_reruns`]), and the baseline stored
//! when the rules say so.

use crate::events::RunEvent;
use crate::golden::GoldenSet;
use crate::settings::Settings;

/// The verdict cache of this run, when one is asked for (`--cache-dir`, the Action's default)
/// and not `off`; the server key of `--cache-key auto` hashes the workspace as git would track
/// it ([`crate::cache::workspace_manifest`]), leaving out the golden set's directory and the
/// cache and report directories. With `auto`, a key that differs from the one of the manifest
/// stored last is a notice naming the paths that moved it, and a note of the section (so the
/// summary names them too; `read-write` only: `write-only` reuses nothing anyway); an
/// unreadable manifest is a short notice, a missing one says nothing.
pub(crate) fn cache_use(
    settings: &Settings,
    layer1: &crate::settings::layer1::Layer1Settings,
    set: &GoldenSet,
    measured_at: &str,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Option<crate::trials::CacheUse> {
    use crate::settings::layer1::CacheKeySetting;
    let dir = layer1.cache_dir.clone().filter(|_| layer1.cache_mode != crate::cache::Mode::Off)?;
    let store = crate::cache::VerdictCache::new(dir.clone(), layer1.cache_mode);
    let mut manifest = None;
    let mut moved = None;
    let server_key = match &layer1.cache_key {
        CacheKeySetting::None => None,
        CacheKeySetting::Text(text) => Some(text.clone()),
        CacheKeySetting::Auto => {
            let root = settings
                .action
                .as_ref()
                .map_or_else(|| std::path::PathBuf::from("."), |action| action.github.workspace.clone());
            let mut skip = vec![dir.clone(), settings.out_dir.clone()];
            // The golden set's directory (its rubric files live there too); the file itself when
            // it sits at the top of the workspace, where its directory is the whole workspace.
            match set.path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
                Some(golden_dir) if golden_dir != root.as_path() && golden_dir != std::path::Path::new(".") => {
                    skip.push(golden_dir.to_path_buf());
                }
                _ => skip.push(set.path.clone()),
            }
            let clean = |path: &std::path::Path| -> std::path::PathBuf {
                path.components().filter(|part| !matches!(part, std::path::Component::CurDir)).collect()
            };
            let skip: Vec<std::path::PathBuf> =
                skip.iter().map(|path| root.join(clean(path.strip_prefix(&root).unwrap_or(path)))).collect();
            match crate::cache::workspace_manifest(&root, &skip) {
                Ok(now) => {
                    let last = store.last_manifest();
                    let reusing = layer1.cache_mode == crate::cache::Mode::ReadWrite;
                    let notice = match &last {
                        Ok(Some(before)) => now.moved_since(before),
                        Ok(None) => None,
                        Err(warning) => Some(format!("{warning}; the paths that moved the cache key are not named")),
                    };
                    if let Some(text) = notice.filter(|_| reusing) {
                        events(&RunEvent::Notice { text: format!("layer 1: {text}") });
                        moved = Some(text);
                    }
                    let key = now.key.clone();
                    // Written again only when it says something new.
                    if !matches!(&last, Ok(Some(before)) if before.key == now.key) {
                        manifest = Some(now);
                    }
                    Some(key)
                }
                Err(error) => {
                    events(&RunEvent::Notice {
                        text: format!(
                            "layer 1: the workspace could not be hashed for the cache key ({error}); the verdict cache is not used"
                        ),
                    });
                    return None;
                }
            }
        }
    };
    Some(crate::trials::CacheUse { store, server_key, measured_at: measured_at.to_owned(), manifest, moved })
}

/// Compares layer 1 with its baseline and gates it (`--fail-on-evals`), and stores this run as
/// the baseline when the Action runs on the default branch and the rules say so. Returns the
/// cases × models a confirmation re-run should repeat (then nothing is stored yet); none when
/// `reruns` are given, or when `replayed` (the answers come from cassettes: a re-run would
/// replay the same answers, so the decision stands unconfirmed and a gate line says so).
#[allow(clippy::too_many_arguments, reason = "one argument per input of the gate")]
pub(crate) fn regression_gate(
    section: &mut crate::report::evals::EvalsSection,
    layer1: &crate::settings::layer1::Layer1Settings,
    set: &GoldenSet,
    surface: &crate::mcp::tools::ToolSurface,
    reruns: Option<crate::baseline::apply::Confirmed<'_>>,
    replayed: bool,
    measured_at: &str,
    layer0: Option<&[crate::report::model::CheckResult]>,
    events: &(dyn Fn(&RunEvent) + Sync),
) -> Vec<crate::baseline::regression::CaseKey> {
    use crate::baseline::apply;
    let endpoint = |label: &str| layer1.endpoint_of(label);
    let (baseline, label, warning, stored_path) = apply::load_for(layer1);
    if let Some(warning) = warning {
        events(&RunEvent::Notice { text: format!("layer 1: {warning}") });
    }
    let specs = case_specs(set);
    let sees = |case: &str, tool: &str| specs.get(case).is_some_and(|spec| spec.sees(tool));
    let tools_now = surface.canonical_text();
    let (gate, confirm) = apply::gate_section(
        section,
        &baseline,
        label,
        &endpoint,
        layer1.fail_on_evals,
        layer1.max_drop,
        &tools_now,
        Some(&sees),
        reruns,
        layer0,
    );
    let sharded = layer1.shard.is_some();
    section.eval_gate = Some(gate);
    if sharded {
        // A shard holds a slice: the merge job gates and stores the whole run.
        if let Some(gate) = section.eval_gate.as_mut() {
            gate.fails = false;
            gate.lines.push("this is one shard: the merge job gates the whole run and stores its baseline".into());
        }
        return Vec::new();
    }
    // The policy `never` reports only: no confirmation re-run is worth its model calls.
    if reruns.is_none()
        && !confirm.is_empty()
        && layer1.fail_on_evals != crate::baseline::regression::FailOnEvals::Never
    {
        if !replayed && layer1.confirm {
            return confirm;
        }
        let why = if replayed {
            "the model's answers are replayed from cassettes, and a re-run would replay the same ones"
        } else {
            "confirmation is off (--confirm false)"
        };
        if let Some(gate) = section.eval_gate.as_mut() {
            gate.lines.push(format!(
                "the gate tripped and was not confirmed by a re-run ({} worsened case(s) × model(s)): {why}; the decision stands on the unconfirmed counts",
                confirm.len()
            ));
        }
    }
    if let (Some(context), Some(path)) = (&layer1.store_context, &stored_path) {
        apply::maybe_store(
            path,
            section,
            &endpoint,
            tools_now,
            &context.event,
            context.on_default_branch,
            layer1.accept_baseline,
            measured_at,
            layer0,
        );
    }
    Vec::new()
}

/// The worsened pairs `confirm` as a confirmation re-run takes them: `(PROVIDER:MODEL, case id)`
/// → the trials the pair ran in the first pass (its eval's `runs` in `section`), so the re-run's
/// trials are numbered on after them, as [`pool_reruns`] numbers their traces.
pub(crate) fn confirm_pairs(
    section: &crate::report::evals::EvalsSection,
    confirm: &[crate::baseline::regression::CaseKey],
) -> std::collections::BTreeMap<(String, String), usize> {
    confirm
        .iter()
        .map(|key| {
            let first = section
                .evals
                .iter()
                .find(|eval| eval.case == key.case && eval.model == key.model)
                .map_or(0, |eval| eval.runs);
            ((key.model.clone(), key.case.clone()), first)
        })
        .collect()
}

/// Pools the confirmation `reruns` into `section`'s evals (counts, threshold, traces: what the
/// report, JUnit and the summary show) and recomputes each model's metrics; returns the evals
/// as they were before, which the gate pairs with the baseline.
pub(crate) fn pool_reruns(
    section: &mut crate::report::evals::EvalsSection,
    reruns: &[crate::report::evals::EvalResult],
) -> Vec<crate::report::evals::EvalResult> {
    let first = section.evals.clone();
    for rerun in reruns {
        if let Some(eval) = section.evals.iter_mut().find(|eval| eval.case == rerun.case && eval.model == rerun.model) {
            crate::trials::assemble::pool_confirmation(eval, rerun);
        }
    }
    section.eval_metrics = section
        .models
        .iter()
        .filter(|model| section.eval_metrics.iter().any(|metrics| metrics.model == **model))
        .map(|model| {
            let own: Vec<&crate::report::evals::EvalResult> =
                section.evals.iter().filter(|eval| eval.model == *model).collect();
            crate::report::evals::metrics_of(model, &own)
        })
        .collect();
    first
}

/// Each case of `set` as the agent loop reads it, by id: what the tool-surface diff asks which
/// cases see a tool.
pub(crate) fn case_specs(set: &GoldenSet) -> std::collections::BTreeMap<String, crate::agent::CaseSpec> {
    set.cases.iter().map(|case| (case.id.clone(), crate::agent::CaseSpec::from_case(case))).collect()
}
