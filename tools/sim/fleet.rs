//! `ib-sim generate-fleet`: a pipeline of N simulated providers, for measuring one `ib-fetch`
//! against a large round (issue 9: a round of 1,000 providers).
//!
//! Writes into one directory everything a run needs besides the dataset:
//! - `spec.yaml`: the given spec with its execution plan sized for N providers (a round
//!   releases every provider at once, so `maximum_global_concurrency` is N and
//!   `total_provider_requests` is 600·N) and its provider table pointing at `providers.yaml`;
//! - `prompts/`: the spec's prompt templates, copied (the spec names them relative to itself);
//! - `providers.yaml`: N providers `sim-0001` … with placeholder endpoints (`ib-fetch
//!   --endpoint-base` sends every request to the simulator instead) and credential variables
//!   that are never read against a simulator;
//! - `sim-profiles.yaml`: one profile per provider, keyed by its slug. `--zero-latency` writes
//!   `time_scale: 0`, so every delay of every profile is zero and a round lasts as long as the
//!   client and the simulator take (the measurement); otherwise narrow distributions
//!   around a 300 ms first token and 200 tokens/s, spread a little per provider.
//!
//! `--apis chat-completions,responses,messages` assigns those wire APIs to the providers in
//! turn (`sim-0001` the first, `sim-0002` the second…): each row names its `api`, its
//! endpoint ends with the API's route, and its fields are valid for the API under
//! docs/reference/wire-apis.md (no `token_limit_field` and no `stream_usage` outside chat
//! completions; the spec's reasoning effort as `reasoning.effort` on Responses and as
//! `thinking` on Messages). With a Messages provider in the fleet the spec's
//! `inference.structured_output.mode` becomes `prompt_only` (Messages has no JSON mode).
//! Without `--apis` the output is what it always was.
use anyhow::{Context, Result};
use inferbench_contract::vocab::WireApi;
use inferbench_contract::Error;
use inferbench_store::atomic;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The provider table's credential variable of provider `i`: valid, distinct, never set.
fn env_name(i: usize) -> String {
    format!("IB_FLEET_SIM_{i:04}_KEY")
}

pub fn name(i: usize) -> String {
    format!("sim-{i:04}")
}

/// The execution plan's lines in the bundled spec that depend on the provider count.
const CONCURRENCY: &str = "maximum_global_concurrency:";
const TOTAL: &str = "total_provider_requests:";
const TABLE: &str = "table:";

pub struct Fleet {
    pub providers: usize,
    pub out: PathBuf,
    pub spec: PathBuf,
    pub zero_latency: bool,
    /// The wire APIs assigned in turn (empty: chat completions, no `api` written).
    pub apis: Vec<WireApi>,
}

/// The thinking budget of a Messages provider at any effort but `none`.
pub const THINKING_BUDGET_TOKENS: u32 = 1024;

/// Writes the fleet. A bad `--providers`, or a spec or prompt directory that cannot be read or
/// used, is bad input (exit 3); a fleet that cannot be written is the command's failure (exit 1).
pub fn generate(fleet: &Fleet) -> Result<()> {
    let n = fleet.providers;
    if n == 0 || n > 9999 {
        return Err(Error::bad(format!("--providers: from 1 to 9999, got {n}")).into());
    }
    let spec_text = std::fs::read_to_string(&fleet.spec).map_err(|e| Error::unreadable(&fleet.spec, e))?;
    let mut sized = sized_spec(&spec_text, n).ok_or_else(|| {
        Error::bad(format!(
            "{}: the spec names no provider table (providers.table); a fleet replaces the table, not an inline list",
            fleet.spec.display()
        ))
    })?;
    let table = if fleet.apis.is_empty() {
        providers_yaml(n)
    } else {
        let effort = inferbench_inputs::spec::Spec::load(&fleet.spec)?.inference.reasoning.default_effort;
        if fleet.apis.iter().take(n).any(|api| *api == WireApi::Messages) {
            sized = prompt_only(&sized).ok_or_else(|| {
                Error::bad(format!(
                    "{}: a fleet with a Messages provider needs inference.structured_output.mode (set to prompt_only), which the spec does not write",
                    fleet.spec.display()
                ))
            })?;
        }
        providers_yaml_for(n, &fleet.apis, &effort)
    };
    let out = &fleet.out;
    std::fs::create_dir_all(out.join("prompts")).with_context(|| format!("cannot create {}", out.display()))?;
    let prompts = fleet.spec.parent().unwrap_or(Path::new(".")).join("prompts");
    for entry in std::fs::read_dir(&prompts).map_err(|e| Error::unreadable(&prompts, e))? {
        let path = entry.map_err(|e| Error::unreadable(&prompts, e))?.path();
        if path.is_file() {
            let to = out.join("prompts").join(path.file_name().expect("a file has a name"));
            std::fs::copy(&path, &to).with_context(|| format!("cannot copy {} to {}", path.display(), to.display()))?;
        }
    }
    atomic::write(&out.join("spec.yaml"), sized.as_bytes())?;
    atomic::write(&out.join("providers.yaml"), table.as_bytes())?;
    atomic::write(&out.join("sim-profiles.yaml"), profiles_yaml(n, fleet.zero_latency).as_bytes())?;
    Ok(())
}

/// The spec with its execution plan sized for `n` providers and its table `providers.yaml`.
/// Only whole `key: value` lines are rewritten, so the rest of the spec (comments included)
/// is the caller's. `None` when the spec names no provider table to replace.
fn sized_spec(text: &str, n: usize) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let (mut concurrency, mut total, mut table) = (false, false, false);
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if trimmed.starts_with(CONCURRENCY) {
            concurrency = true;
            let _ = writeln!(out, "{indent}{CONCURRENCY} {n}");
        } else if trimmed.starts_with(TOTAL) {
            total = true;
            let _ = writeln!(out, "{indent}{TOTAL} {}", 600 * n);
        } else if trimmed.starts_with(TABLE) && !indent.is_empty() {
            table = true;
            let _ = writeln!(out, "{indent}{TABLE} providers.yaml");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    // Absent keys are not checked against the table, so a spec without them still fits.
    let _ = (concurrency, total);
    table.then_some(out)
}

/// The spec with its `inference.structured_output.mode` line set to `prompt_only`; `None` when
/// it has no such line.
fn prompt_only(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    // The indent of the `structured_output:` line while inside its block.
    let mut block: Option<usize> = None;
    let mut found = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if block.is_some_and(|b| !trimmed.is_empty() && !trimmed.starts_with('#') && indent <= b) {
            block = None;
        }
        if trimmed.starts_with("structured_output:") {
            block = Some(indent);
        } else if block.is_some() && trimmed.starts_with("mode:") {
            found = true;
            let _ = writeln!(out, "{}mode: prompt_only", &line[..indent]);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    found.then_some(out)
}

/// The provider table of `n` providers with `apis` assigned in turn, `effort` the spec's
/// reasoning effort.
fn providers_yaml_for(n: usize, apis: &[WireApi], effort: &str) -> String {
    let mut out = String::from(
        "# Generated by `ib-sim generate-fleet`: simulated providers only. Every endpoint is a\n\
         # placeholder; run ib-fetch with --endpoint-base pointing at ib-sim.\nproviders:\n",
    );
    for i in 1..=n {
        let name = name(i);
        let api = apis[(i - 1) % apis.len()];
        let limit_and_reasoning = match api {
            WireApi::ChatCompletions => {
                format!("    token_limit_field: max_tokens\n    reasoning: {{reasoning_effort: {effort}}}\n")
            }
            WireApi::Responses => format!("    reasoning: {{reasoning: {{effort: {effort}}}}}\n"),
            WireApi::Messages if effort == "none" || effort.is_empty() => {
                "    reasoning: {thinking: {type: disabled}}\n".to_string()
            }
            WireApi::Messages => {
                format!("    reasoning: {{thinking: {{type: enabled, budget_tokens: {THINKING_BUDGET_TOKENS}}}}}\n")
            }
        };
        let _ = write!(
            out,
            "  - name: {name}\n    api: {api}\n    endpoint: https://{name}.invalid/{}\n    auth: {{kind: bearer, env: {}}}\n    \
             model_id: m-{name}\n{limit_and_reasoning}    price_usd_per_million_tokens: {{input: 0.15, output: 0.50}}\n",
            api.route(),
            env_name(i)
        );
    }
    out
}

fn providers_yaml(n: usize) -> String {
    let mut out = String::from(
        "# Generated by `ib-sim generate-fleet`: simulated providers only. Every endpoint is a\n\
         # placeholder; run ib-fetch with --endpoint-base pointing at ib-sim.\nproviders:\n",
    );
    for i in 1..=n {
        let name = name(i);
        let _ = write!(
            out,
            "  - name: {name}\n    endpoint: https://{name}.invalid/v1/chat/completions\n    auth: {{kind: bearer, env: {}}}\n    \
             model_id: m-{name}\n    token_limit_field: max_tokens\n    reasoning: {{reasoning_effort: low}}\n    \
             price_usd_per_million_tokens: {{input: 0.15, output: 0.50}}\n",
            env_name(i)
        );
    }
    out
}

fn profiles_yaml(n: usize, zero_latency: bool) -> String {
    let mut out = String::from("# Generated by `ib-sim generate-fleet`.\n");
    if zero_latency {
        out.push_str("# Zero latency: every delay of every profile is multiplied by 0.\ntime_scale: 0\n");
    } else {
        out.push_str("time_scale: 1.0\n");
    }
    out.push_str("providers:\n");
    for i in 1..=n {
        let name = name(i);
        // A spread of ±10% across the fleet, so providers differ without any fault.
        let f = 1.0 + ((i % 21) as f64 - 10.0) / 100.0;
        let _ = write!(
            out,
            "  {name}:\n    model: m-{name}\n    ttft_ms: {{median: {:.0}, p99: {:.0}}}\n    \
             tokens_per_second: {{median: {:.0}, p05: {:.0}}}\n",
            300.0 * f,
            330.0 * f,
            200.0 / f,
            180.0 / f
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profiles;
    use inferbench_inputs::providers::{slug, ProviderTable};

    #[test]
    fn a_fleet_is_a_valid_pipeline_of_n_providers() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let fleet = Fleet {
            providers: 25,
            out: dir.path().join("fleet"),
            spec: repo.join("pipelines/micro-single-task/spec.yaml"),
            zero_latency: true,
            apis: Vec::new(),
        };
        generate(&fleet).unwrap();
        let profiles = Profiles::load(&fleet.out.join("sim-profiles.yaml")).unwrap();
        assert_eq!(profiles.time_scale, 0.0);
        assert_eq!(profiles.providers.len(), 25);
        // The sized spec loads, with its table, as every stage loads it.
        let spec = inferbench_inputs::spec::Spec::load(&fleet.out.join("spec.yaml")).unwrap();
        let table = ProviderTable::of_spec(&spec).unwrap();
        assert_eq!(table.providers.len(), 25);
        for p in &table.providers {
            let profile = &profiles.providers[&slug(&p.name)];
            assert_eq!(profile.model, p.model_id, "the simulator echoes the model the table expects");
        }
        let spec = std::fs::read_to_string(fleet.out.join("spec.yaml")).unwrap();
        assert!(spec.contains("maximum_global_concurrency: 25\n") && spec.contains("total_provider_requests: 15000\n"));
        assert!(fleet.out.join("prompts/ticket-triage.system.txt").is_file());
        let err = generate(&Fleet { providers: 0, ..fleet }).unwrap_err();
        assert!(err.to_string().contains("--providers"), "{err}");
        assert_eq!(inferbench_cli::exit_for(&err), inferbench_cli::Exit::BadInput);
    }

    #[test]
    fn without_apis_the_rows_are_chat_rows_naming_no_api() {
        // The default table is the chat row of --apis chat-completions without its `api` line.
        let chat = providers_yaml_for(7, &[WireApi::ChatCompletions], "low");
        assert_eq!(chat.replace("    api: chat-completions\n", ""), providers_yaml(7));
        assert_eq!(chat.matches("    api: chat-completions\n").count(), 7);
    }

    #[test]
    fn apis_are_assigned_in_turn_with_each_api_s_fields() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let spec = repo.join("pipelines/micro-single-task/spec.yaml");
        let fleet = Fleet {
            providers: 5,
            out: dir.path().join("fleet"),
            spec: spec.clone(),
            zero_latency: false,
            apis: vec![WireApi::ChatCompletions, WireApi::Responses, WireApi::Messages],
        };
        generate(&fleet).unwrap();
        let text = std::fs::read_to_string(fleet.out.join("providers.yaml")).unwrap();
        let root: serde_json::Value = serde_norway::from_str(&text).unwrap();
        let rows = root["providers"].as_array().unwrap();
        assert_eq!(rows.len(), 5);
        let apis: Vec<&str> = rows.iter().map(|r| r["api"].as_str().unwrap()).collect();
        assert_eq!(apis, ["chat-completions", "responses", "messages", "chat-completions", "responses"]);
        for row in rows {
            let p: inferbench_inputs::providers::Provider = serde_json::from_value(row.clone()).unwrap();
            let api = p.api.unwrap();
            assert!(p.endpoint.ends_with(api.route()), "{}", p.endpoint);
            assert!(!p.stream_usage);
            match api {
                WireApi::ChatCompletions => {
                    assert_eq!(p.token_limit_field, "max_tokens");
                    assert_eq!(row["reasoning"], serde_json::json!({"reasoning_effort": "low"}));
                }
                WireApi::Responses => {
                    assert!(p.token_limit_field.is_empty());
                    assert_eq!(row["reasoning"], serde_json::json!({"reasoning": {"effort": "low"}}));
                }
                WireApi::Messages => {
                    assert!(p.token_limit_field.is_empty());
                    let thinking = serde_json::json!({"thinking": {"type": "enabled", "budget_tokens": 1024}});
                    assert_eq!(row["reasoning"], thinking);
                }
            }
        }
        // A Messages provider makes the structured output prompt_only; the rest of the spec is
        // the sized spec, and it loads.
        let sized = std::fs::read_to_string(fleet.out.join("spec.yaml")).unwrap();
        let original = sized_spec(&std::fs::read_to_string(&spec).unwrap(), 5).unwrap();
        assert!(original.contains("    mode: json_object\n"));
        assert_eq!(sized, original.replace("    mode: json_object\n", "    mode: prompt_only\n"));
        let loaded = inferbench_inputs::spec::Spec::load(&fleet.out.join("spec.yaml")).unwrap();
        assert_eq!(loaded.inference.structured_output.mode, "prompt_only");
        // The profiles are the same with or without APIs.
        let plain = Fleet { out: dir.path().join("plain"), apis: Vec::new(), ..fleet };
        generate(&plain).unwrap();
        let profiles = |f: &Fleet| std::fs::read_to_string(f.out.join("sim-profiles.yaml")).unwrap();
        assert_eq!(profiles(&plain), std::fs::read_to_string(dir.path().join("fleet/sim-profiles.yaml")).unwrap());
        // Without a Messages provider the structured output is left alone.
        let two = Fleet {
            out: dir.path().join("two"),
            apis: vec![WireApi::Responses, WireApi::Messages],
            providers: 1,
            ..plain
        };
        generate(&two).unwrap();
        assert!(std::fs::read_to_string(two.out.join("spec.yaml")).unwrap().contains("    mode: json_object\n"));
    }

    #[test]
    fn thinking_is_disabled_at_effort_none() {
        let table = providers_yaml_for(1, &[WireApi::Messages], "none");
        assert!(table.contains("    reasoning: {thinking: {type: disabled}}\n"), "{table}");
        assert!(!table.contains("token_limit_field"));
    }

    #[test]
    fn only_the_structured_output_mode_line_changes() {
        let text = "a:\n  mode: x\ninference:\n  structured_output:\n    # a comment\n    mode: json_object\n    schema_enforcement: local_strict\n  other:\n    mode: y\n";
        let want = text.replace("mode: json_object", "mode: prompt_only");
        assert_eq!(prompt_only(text).unwrap(), want);
        assert!(prompt_only("inference:\n  temperature: 0\n").is_none());
    }
}
