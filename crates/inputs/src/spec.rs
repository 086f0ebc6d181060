//! The pipeline spec (`pipelines/<workflow>/spec.yaml`), in the reference runner's keys.
//!
//! Every key is accounted for (`spec/keys.rs`): the ones inferbench acts upon are typed here
//! and their values checked; the informational ones must hold the one value inferbench
//! implements (a spec asking for two attempts or a concurrency of 4 is refused, not silently
//! run with one); descriptions are free text; any other key is an error naming its path. All
//! problems are reported at once, each as `file: key.path: what is wrong`, before `ib-select`
//! writes anything; every later stage loads the spec through the same code.
//!
//! Paths inside the spec (prompt templates, the provider table) are relative to the spec
//! file's directory; `dataset.source` is relative to the working directory, as in the
//! reference.
//!
//! The providers are listed either in a provider table (`providers.table`, inferbench's form)
//! or inline, as the reference runner lists them (`providers.vendors`, completed by the
//! built-in knowledge of its ten providers: `spec/vendors.rs`). Both give one
//! [`ProviderTable`] (`ProviderTable::of_spec`), so no stage knows which form a spec used.
mod cache;
mod check;
mod keys;
mod limits;
mod load;
mod search;
mod transport;
mod vendors;
mod workload;

use crate::provider::ProviderTable;
use inferbench_contract::vocab::{TaskFamily, WireApi};

use check::{Problems, Reader};
use inferbench_contract::{Error, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub use cache::{with_nonce, CacheSettings, CACHE_BUSTING_KEY, CACHE_PROBE_KEY, MAX_PROBE_ROUNDS};
pub use limits::{
    check_timeout, parse_timeout_seconds, StreamLimits, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_RESPONSE_BYTES,
    MAX_STREAM_LIMIT_BYTES, MAX_TIMEOUT_SECONDS,
};
pub use load::{
    seconds_ns, LoadPlan, Objectives, StepTarget, LOAD_KEY, MAX_RATE, MAX_REQUESTS as MAX_LOAD_REQUESTS,
    MAX_STEP_SECONDS,
};
pub use search::{CapacitySearch, MAX_PROBES, MIN_TOLERANCE, SEARCH_KEY};
pub use transport::{HttpVersion, Transport, HTTP_VERSION_KEY};
pub use workload::{Synthetic, Workload, MAX_INPUT_TOKENS, MAX_OUTPUT_TOKENS, MAX_PROMPT_TOKENS, WORKLOAD_KEY};

/// The task families inferbench knows how to score, in their schedule order (`synthetic`, a
/// load workflow's prompts, is no family of a dataset).
pub const FAMILIES: &[&str] = &[
    TaskFamily::MeetingNotesLookup.as_str(),
    TaskFamily::TicketTriage.as_str(),
    TaskFamily::ContractTermsExtraction.as_str(),
];

/// The per-provider metric columns `ib-aggregate` computes that the reference's spec can
/// name (its 23, in its order, from the metric catalogue);
/// `reporting.required_provider_metric_columns` may list any of them.
pub fn metric_columns() -> Vec<String> {
    inferbench_contract::metrics::reference_columns().map(|c| c.key()).collect()
}

/// The reasoning efforts a provider can be asked for.
pub const EFFORTS: [&str; 5] = ["none", "minimal", "low", "medium", "high"];

#[derive(Debug, Clone)]
pub struct Spec {
    pub path: PathBuf,
    pub slug: String,
    pub name: String,
    /// Default dataset directory (relative to the working directory, as in the reference).
    pub dataset_source: PathBuf,
    pub selected_per_family: usize,
    pub families: Vec<FamilySpec>,
    pub model: String,
    /// Where the provider entries come from.
    pub provider_source: ProviderSource,
    /// The file the provider entries are read from: the table named by `providers.table`,
    /// resolved against the spec's directory, or, for `providers.vendors`, the spec itself.
    /// Load the providers with `ProviderTable::of_spec`, which knows both forms.
    pub providers_path: PathBuf,
    pub inference: Inference,
    pub execution_plan: ExecutionPlan,
    /// A load workflow's plan (the `load` section); `None` for the closed-loop workflow.
    pub load: Option<LoadPlan>,
    pub required_columns: Vec<String>,
}

/// Where a spec's providers are listed.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderSource {
    /// `providers.table`: a provider table file (`providers.yaml`), by path.
    Table(PathBuf),
    /// `providers.vendors`: the reference runner's inline list, checked against and completed
    /// by the built-in knowledge of its ten providers, in the spec's order.
    Vendors(ProviderTable),
}

#[derive(Debug, Clone)]
pub struct FamilySpec {
    pub name: TaskFamily,
    pub available_items: usize,
    pub input_tokens: (i64, i64),
    /// As written in the spec, e.g. `prompts/meeting-notes.system.txt`: the template's logical name.
    pub prompt_template: String,
}

/// The request settings sent to every provider, and the client's limits.
#[derive(Debug, Clone)]
pub struct Inference {
    /// The wire API of every provider whose row names none (`inference.api`; chat completions
    /// when the spec names none either).
    pub api: WireApi,
    pub temperature: f64,
    pub top_p: f64,
    pub presence_penalty: f64,
    pub frequency_penalty: f64,
    pub max_completion_tokens: u32,
    /// The one deadline of each exchange, in (0, [`MAX_TIMEOUT_SECONDS`]].
    pub timeout_seconds: f64,
    pub reasoning: Reasoning,
    pub structured_output: StructuredOutput,
    /// Bounded memory against hostile streams.
    pub stream_limits: StreamLimits,
    /// The HTTP version the client speaks (HTTP/1.1 unless the spec asks for HTTP/2).
    pub transport: Transport,
    /// Round nonces and the prompt-cache probe (both off unless the spec asks).
    pub cache: CacheSettings,
}

#[derive(Debug, Clone)]
pub struct Reasoning {
    /// One of [`EFFORTS`]; every provider's `reasoning.reasoning_effort` must equal it.
    pub default_effort: String,
}

#[derive(Debug, Clone)]
pub struct StructuredOutput {
    /// One of [`STRUCTURED_OUTPUT_MODES`]: `json_object` asks the API for a JSON object (chat's
    /// `response_format`, Responses' `text.format`); `prompt_only` asks nothing of the API (the
    /// prompt alone asks for JSON, as the Messages API requires). Either way every answer is
    /// checked locally and strictly.
    pub mode: String,
}

/// The values `inference.structured_output.mode` may take.
pub const STRUCTURED_OUTPUT_MODES: [&str; 2] = ["json_object", "prompt_only"];

/// The run-size figures of `execution_plan` that depend on the provider table, checked
/// against it when the table is loaded (`ProviderTable::load`). `None`: not written.
#[derive(Debug, Clone, Default)]
pub struct ExecutionPlan {
    /// Must equal the number of providers: every provider of a round is released at once.
    pub maximum_global_concurrency: Option<u64>,
    /// Must equal rounds × providers.
    pub total_provider_requests: Option<u64>,
}

/// Parses a token band such as `500-1000`.
pub fn parse_band(text: &str) -> Option<(i64, i64)> {
    let (lo, hi) = text.split_once('-')?;
    let (lo, hi) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
    (0 <= lo && lo <= hi).then_some((lo, hi))
}

/// Whether `value` is a number in the closed range, as a check for [`Reader::number`].
fn within(lo: f64, hi: f64) -> impl Fn(f64) -> std::result::Result<(), String> {
    move |x| if (lo..=hi).contains(&x) { Ok(()) } else { Err(format!("must be from {lo} to {hi}, found {x}")) }
}

impl Spec {
    /// Reads and validates a spec file. A missing or unreadable file, YAML that does not
    /// parse, and every problem of its content are bad input.
    pub fn load(path: &Path) -> Result<Spec> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::unreadable(path, e))?;
        let root: Value = serde_norway::from_str(&text)
            .map_err(|e| Error::bad(format!("{}: not valid YAML: {e}", path.display())))?;
        Self::from_value(path, &root)
    }

    /// Validates a parsed spec; `path` names it in messages and anchors its relative paths.
    pub fn from_value(path: &Path, root: &Value) -> Result<Spec> {
        let mut problems = Problems::new(path.display().to_string());
        check::walk(root, "", &keys::SPEC, &mut problems);
        let mut r = Reader::new(root, problems);
        let spec = Self::read(path, &mut r);
        if r.problems.list.is_empty() {
            Ok(spec)
        } else {
            Err(Error::Invalid(r.problems.list))
        }
    }

    /// The acted-upon values. Anything missing or wrong was reported and reads as a default,
    /// so every problem is found in one pass; the result is only used when there were none.
    fn read(path: &Path, r: &mut Reader) -> Spec {
        let dir = path.parent().unwrap_or(Path::new("."));
        // Derived checks run only on values that were read, so one mistake is one problem.
        let per_family = r.integer("dataset.selection.selected_items_per_task_family", 1, 1_000_000);
        let families = families(r, per_family);
        let total: Option<u64> =
            families.iter().map(|f| (f.available_items > 0).then_some(f.available_items as u64)).sum();
        if let (Some(n), Some(total)) = (r.integer("dataset.available_items", 0, u64::MAX), total) {
            if n != total {
                let what = format!("{n} differs from the families' available_items, {total} in all");
                r.push("dataset.available_items", what);
            }
        }
        let counts = [
            ("dataset.selected_items", "selected_items_per_task_family × 3 families"),
            ("execution_plan.requests_per_provider", "one request per provider per round"),
            ("execution_plan.question_rounds", "selected_items_per_task_family × 3 families"),
        ];
        for (at, why) in counts {
            let rounds = per_family.map(|n| n * FAMILIES.len() as u64);
            if let (Some(n), Some(rounds)) = (r.integer(at, 0, u64::MAX), rounds) {
                if n != rounds {
                    r.push(at, format!("{n} differs from {rounds} ({why})"));
                }
            }
        }
        let source = r.string("dataset.source").unwrap_or_default();
        if let Some(manifest) = r.string("dataset.manifest") {
            let expected = Path::new(&source).join("manifest.json");
            if Path::new(&manifest) != expected {
                let why = "inferbench reads the manifest.json of the dataset directory";
                r.push("dataset.manifest", format!("must be `{}`, found `{manifest}`: {why}", expected.display()));
            }
        }
        let (model, provider_source) = providers_section(r, dir);
        let providers_path = match &provider_source {
            ProviderSource::Table(table) => table.clone(),
            ProviderSource::Vendors(_) => path.to_path_buf(),
        };
        let execution_plan = ExecutionPlan {
            maximum_global_concurrency: r.integer("execution_plan.maximum_global_concurrency", 1, 10_000),
            total_provider_requests: r.integer("execution_plan.total_provider_requests", 0, u64::MAX),
        };
        // Read in the order problems have always been reported in.
        let slug = r.string("benchmark.slug").unwrap_or_default();
        let name = r.string("benchmark.name").unwrap_or_default();
        let inference = inference(r);
        let load = load::read(r, dir);
        cache::check_against_load(r, &inference.cache, load.as_ref());
        Spec {
            path: path.to_path_buf(),
            slug,
            name,
            dataset_source: PathBuf::from(source),
            selected_per_family: per_family.unwrap_or(1) as usize,
            families,
            model,
            providers_path,
            provider_source,
            inference,
            execution_plan,
            load,
            required_columns: required_columns(r),
        }
    }

    /// The directory the spec's relative paths are resolved against.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// The provider table file the spec names, if it lists its providers in one (a file the
    /// run is bound to); `None` when they are listed in the spec itself.
    pub fn provider_table_file(&self) -> Option<&Path> {
        match &self.provider_source {
            ProviderSource::Table(path) => Some(path),
            ProviderSource::Vendors(_) => None,
        }
    }

    /// The family's spec, if it is one of ours.
    pub fn family(&self, name: &str) -> Option<&FamilySpec> {
        self.families.iter().find(|f| f.name.as_str() == name)
    }

    /// The spec's task families, in schedule order: exactly the families of [`TaskFamily`].
    pub fn task_families(&self) -> Vec<TaskFamily> {
        self.families.iter().map(|f| f.name).collect()
    }
}

fn families(r: &mut Reader, per_family: Option<u64>) -> Vec<FamilySpec> {
    if let Some(map) = r.get("dataset.task_families").and_then(Value::as_object) {
        let names: Vec<&str> = map.keys().map(String::as_str).collect();
        if names.iter().all(|n| FAMILIES.contains(n)) && names.len() == FAMILIES.len() && names != FAMILIES {
            r.push(
                "dataset.task_families",
                format!("expected the families in the order {FAMILIES:?}, found {names:?}"),
            );
        }
    }
    let mut families = Vec::new();
    for &name in TaskFamily::DATASET {
        let at = format!("dataset.task_families.{name}");
        let available = r.integer(&format!("{at}.available_items"), 1, 100_000_000).unwrap_or(0);
        if let Some(per_family) = per_family.filter(|n| available > 0 && *n > available) {
            let why = "cannot select more items than the family has";
            let what = format!("{per_family} exceeds {at}.available_items {available}: {why}");
            r.push("dataset.selection.selected_items_per_task_family", what);
        }
        let selected = r.integer(&format!("{at}.selected_items"), 0, u64::MAX);
        if let (Some(n), Some(per_family)) = (selected, per_family) {
            if n != per_family {
                let what = format!("{n} differs from selected_items_per_task_family {per_family}");
                r.push(&format!("{at}.selected_items"), what);
            }
        }
        let band_at = format!("{at}.input_tokens");
        let input_tokens = r.string(&band_at).and_then(|text| {
            let band = parse_band(&text);
            if band.is_none() {
                r.push(&band_at, format!("expected LOW-HIGH with 0 <= LOW <= HIGH, found `{text}`"));
            }
            band
        });
        let template_at = format!("{at}.prompt_template");
        let prompt_template = r.string(&template_at).unwrap_or_default();
        // The template's path is its logical name in lock.json: an absolute or escaping path
        // would bind the run to this machine's layout.
        let template = Path::new(&prompt_template);
        if template.is_absolute() || template.components().any(|c| c == std::path::Component::ParentDir) {
            r.push(&template_at, "must be a path inside the spec's directory (relative, without `..`)");
        }
        families.push(FamilySpec {
            name,
            available_items: available as usize,
            input_tokens: input_tokens.unwrap_or((0, 0)),
            prompt_template,
        });
    }
    families
}

/// `providers.model` and where the provider entries are: the one place that learns a new
/// [`ProviderSource`].
fn providers_section(r: &mut Reader, dir: &Path) -> (String, ProviderSource) {
    let model = r.string("providers.model").unwrap_or_default();
    let (table, inline) = (r.get("providers.table"), r.get("providers.vendors"));
    if table.is_some() && inline.is_some() {
        r.push(
            "providers",
            "both table and vendors: list the providers in one place, a provider table (providers.table) \
             or the reference runner's inline list (providers.vendors)",
        );
    }
    if inline.is_some() {
        return (model, ProviderSource::Vendors(vendors::read(r)));
    }
    let table = match table {
        Some(_) => r.string("providers.table").unwrap_or_default(),
        None => {
            if r.get("providers").is_some_and(Value::is_object) {
                r.push(
                    "providers.table",
                    "missing: name the provider table, e.g. `table: providers.yaml`, \
                     or list the reference's providers under providers.vendors",
                );
            }
            String::new()
        }
    };
    (model, ProviderSource::Table(dir.join(table)))
}

fn inference(r: &mut Reader) -> Inference {
    let timeout_seconds = r.number("inference.timeout_seconds", check_timeout).unwrap_or(1.0);
    let default_effort = r.string("inference.reasoning.default_effort").unwrap_or_default();
    if !default_effort.is_empty() && !EFFORTS.contains(&default_effort.as_str()) {
        r.push("inference.reasoning.default_effort", format!("`{default_effort}` is not one of {EFFORTS:?}"));
    }
    let max_tokens = r.integer("inference.max_completion_tokens", 1, 1_000_000).unwrap_or(1);
    let top_p = r.number("inference.top_p", |p| {
        if p > 0.0 && p <= 1.0 {
            Ok(())
        } else {
            Err(format!("must be greater than 0 and at most 1, found {p}"))
        }
    });
    let api = match r.string("inference.api") {
        None => WireApi::ChatCompletions,
        Some(text) => text.parse().unwrap_or_else(|_| {
            r.push("inference.api", format!("`{text}` is not one of {}", WireApi::NAMES.join(", ")));
            WireApi::ChatCompletions
        }),
    };
    let mode = r.string("inference.structured_output.mode").unwrap_or_else(|| "json_object".into());
    if !STRUCTURED_OUTPUT_MODES.contains(&mode.as_str()) {
        r.push(
            "inference.structured_output.mode",
            format!("`{mode}` is not one of {}", STRUCTURED_OUTPUT_MODES.join(", ")),
        );
    }
    Inference {
        api,
        temperature: r.number("inference.temperature", within(0.0, 2.0)).unwrap_or(0.0),
        top_p: top_p.unwrap_or(1.0),
        presence_penalty: r.number("inference.presence_penalty", within(-2.0, 2.0)).unwrap_or(0.0),
        frequency_penalty: r.number("inference.frequency_penalty", within(-2.0, 2.0)).unwrap_or(0.0),
        max_completion_tokens: max_tokens as u32,
        timeout_seconds,
        reasoning: Reasoning { default_effort },
        structured_output: StructuredOutput { mode },
        stream_limits: limits::read(r),
        transport: transport::read(r),
        cache: cache::read(r),
    }
}

fn required_columns(r: &mut Reader) -> Vec<String> {
    let at = "reporting.required_provider_metric_columns";
    let columns = r.strings(at).unwrap_or_default();
    if r.get(at).is_some_and(Value::is_array) && columns.is_empty() {
        r.push(at, "expected at least one column");
    }
    let mut seen = std::collections::BTreeSet::new();
    let known = metric_columns();
    for column in &columns {
        if !known.contains(column) {
            r.push(at, format!("`{column}` is not a metric inferbench computes (one of {})", known.join(", ")));
        } else if !seen.insert(column) {
            r.push(at, format!("`{column}` is listed twice"));
        }
    }
    columns
}

#[cfg(test)]
mod tests;
