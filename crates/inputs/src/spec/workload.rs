//! `load.workload`: what a load run sends. The dataset's items (`kind: dataset`, the default:
//! families taking turns, every answer scored by its family's rubric), or synthetic prompts
//! (`kind: synthetic`): words whose o200k_base encoding is exactly `input_tokens` long, each
//! asking for `output_tokens` answer tokens (sent as the provider's token limit), the first
//! `shared_prefix_tokens` of them the same in every prompt. No rubric scores a synthetic
//! answer, so a synthetic workload has no accuracy and its goodput cannot ask for a correct
//! answer (`load.objectives.correct: true` is refused).
//!
//! A length is an integer (every request the same) or a distribution, every draw rounded to a
//! whole number of tokens and kept in `[min, max]`:
//!
//! ```yaml
//! input_tokens: 512
//! output_tokens: {distribution: uniform, min: 64, max: 256}
//! # or {distribution: normal, mean: 128, stddev: 32, min: 16, max: 512}
//! # or {distribution: lognormal, mean: 128, stddev: 64}     (the distribution's own mean and
//! #     standard deviation, not its logarithm's; min defaults to 1, max to the largest length)
//! ```
//!
//! A replayed trace (`arrivals: trace`) whose lines give `input_tokens` and `output_tokens`
//! sends those, line by line; the spec's lengths stand in for a line without them, and may be
//! left out when every line has them (the trace is checked when it is read, before anything
//! is locked).
use super::check::{shown, Reader};
use inferbench_contract::documents::TokenLengths;
use inferbench_contract::vocab::{LengthDistribution, WorkloadKind};
use serde_json::Value;

/// The section's key.
pub const WORKLOAD_KEY: &str = "load.workload";
/// The longest synthetic prompt, in o200k_base tokens (the longest context windows served).
pub const MAX_INPUT_TOKENS: u32 = 262_144;
/// The most answer tokens a synthetic request may ask for.
pub const MAX_OUTPUT_TOKENS: u32 = 262_144;
/// The most prompt tokens a load run's schedule may hold for one provider (each request's
/// prompt is a row of `schedule.parquet`, about five bytes a token, and `ib-fetch` holds the
/// schedule in memory): requests × mean prompt length.
pub const MAX_PROMPT_TOKENS: f64 = 100_000_000.0;

/// What a load run sends.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Workload {
    /// The dataset's selected items, scored by their rubrics.
    #[default]
    Dataset,
    Synthetic(Synthetic),
}

/// A synthetic workload's lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthetic {
    /// The prompts' lengths in o200k_base tokens; `None` only when a replayed trace gives every
    /// request's.
    pub input_tokens: Option<TokenLengths>,
    /// The answer tokens each request asks for; `None` as above.
    pub output_tokens: Option<TokenLengths>,
    /// The tokens every prompt begins with, the same in every request (0: none).
    pub shared_prefix_tokens: u32,
    /// Ask the server to ignore its end-of-sequence token (`"ignore_eos": true` in the body,
    /// vLLM's and SGLang's extension; other servers may refuse or ignore it), so answers run to
    /// their requested length.
    pub ignore_eos: bool,
}

impl Workload {
    pub fn kind(&self) -> WorkloadKind {
        match self {
            Workload::Dataset => WorkloadKind::Dataset,
            Workload::Synthetic(_) => WorkloadKind::Synthetic,
        }
    }

    pub fn synthetic(&self) -> Option<&Synthetic> {
        match self {
            Workload::Synthetic(s) => Some(s),
            Workload::Dataset => None,
        }
    }
}

impl Synthetic {
    /// Whether a trace line's sizes (`None` where the line has none) can be sent: each one
    /// given or stood in for by the spec's, the prompt longer than the shared prefix, every
    /// length within its bounds. `Err` says what is wrong, in words.
    pub fn check_sizes(&self, input: Option<u64>, output: Option<u64>) -> Result<(), String> {
        match (input, &self.input_tokens) {
            (None, None) => return Err("no input_tokens, and the spec's load.workload gives none".into()),
            (Some(n), _) if n <= u64::from(self.shared_prefix_tokens) || n > u64::from(MAX_INPUT_TOKENS) => {
                return Err(format!(
                    "input_tokens {n}: a synthetic prompt has more tokens than its shared prefix ({}) and at most \
                     {MAX_INPUT_TOKENS}",
                    self.shared_prefix_tokens
                ))
            }
            _ => {}
        }
        match (output, &self.output_tokens) {
            (None, None) => Err("no output_tokens, and the spec's load.workload gives none".into()),
            (Some(n), _) if n == 0 || n > u64::from(MAX_OUTPUT_TOKENS) => {
                Err(format!("output_tokens {n}: a request asks for 1 to {MAX_OUTPUT_TOKENS} answer tokens"))
            }
            _ => Ok(()),
        }
    }
}

/// The mean of a length's draws, about (the clipping aside).
pub fn mean(lengths: &TokenLengths) -> f64 {
    match lengths.distribution {
        LengthDistribution::Normal | LengthDistribution::Lognormal => lengths.mean.unwrap_or(0.0),
        _ => (f64::from(lengths.min) + f64::from(lengths.max)) / 2.0,
    }
}

/// Reads `load.workload`; `trace` says the arrivals replay a trace (whose lines may give the
/// lengths). Every problem is reported, naming its key.
pub(super) fn read(r: &mut Reader, trace: bool) -> Workload {
    let Some(section) = r.get(WORKLOAD_KEY) else { return Workload::Dataset };
    if !section.is_object() {
        // The walker has said what it expected.
        return Workload::Dataset;
    }
    // A kind missing (the walker names it) or unknown is one problem, not one per key after it.
    let at = format!("{WORKLOAD_KEY}.kind");
    let Some(text) = r.string(&at) else { return Workload::Dataset };
    let Ok(kind) = text.parse::<WorkloadKind>() else {
        r.push(&at, format!("`{text}` is not one of {}", WorkloadKind::NAMES.join(", ")));
        return Workload::Dataset;
    };
    let synthetic_keys = ["input_tokens", "output_tokens", "shared_prefix_tokens", "ignore_eos"];
    if kind == WorkloadKind::Dataset {
        for key in synthetic_keys {
            let at = format!("{WORKLOAD_KEY}.{key}");
            if r.get(&at).is_some() {
                r.push(&at, "only a synthetic workload has one (the dataset's items have their own lengths)");
            }
        }
        return Workload::Dataset;
    }
    let prefix = r.integer(&format!("{WORKLOAD_KEY}.shared_prefix_tokens"), 0, u64::from(MAX_INPUT_TOKENS) - 1);
    let input = lengths(r, "input_tokens", MAX_INPUT_TOKENS, trace);
    let output = lengths(r, "output_tokens", MAX_OUTPUT_TOKENS, trace);
    let shared_prefix_tokens = prefix.unwrap_or(0) as u32;
    if let Some(shortest) = input.as_ref().map(|l| l.min).filter(|min| *min <= shared_prefix_tokens) {
        r.push(
            &format!("{WORKLOAD_KEY}.shared_prefix_tokens"),
            format!(
                "{shared_prefix_tokens} leaves nothing of a {shortest}-token prompt its own: a prompt is its shared \
                 prefix and at least one token more"
            ),
        );
    }
    let ignore_eos = match r.get(&format!("{WORKLOAD_KEY}.ignore_eos")) {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            r.push(&format!("{WORKLOAD_KEY}.ignore_eos"), format!("expected true or false, found {}", shown(other)));
            false
        }
    };
    Workload::Synthetic(Synthetic { input_tokens: input, output_tokens: output, shared_prefix_tokens, ignore_eos })
}

/// One length: an integer from 1 to `max`, or a distribution's mapping. Optional when the
/// arrivals replay a trace.
fn lengths(r: &mut Reader, key: &str, largest: u32, trace: bool) -> Option<TokenLengths> {
    let at = format!("{WORKLOAD_KEY}.{key}");
    let Some(value) = r.get(&at) else {
        if !trace {
            r.push(&at, "missing: a synthetic workload's length, an integer or a distribution");
        }
        return None;
    };
    let whole = |r: &mut Reader, at: &str, value: &Value| -> Option<u32> {
        match value.as_u64().filter(|n| (1..=u64::from(largest)).contains(n)) {
            Some(n) => Some(n as u32),
            None => {
                r.push(at, format!("expected an integer from 1 to {largest}, found {}", shown(value)));
                None
            }
        }
    };
    let Some(map) = value.as_object() else {
        if value.is_number() {
            let n = whole(r, &at, value)?;
            return Some(TokenLengths {
                distribution: LengthDistribution::Constant,
                min: n,
                max: n,
                mean: None,
                stddev: None,
            });
        }
        let what = format!(
            "expected an integer or a distribution ({{distribution: uniform, min, max}}, …), found {}",
            shown(value)
        );
        r.push(&at, what);
        return None;
    };
    let kinds = ["uniform", "normal", "lognormal"];
    let distribution = match map.get("distribution") {
        None => {
            r.push(&format!("{at}.distribution"), format!("missing: one of {}", kinds.join(", ")));
            return None;
        }
        Some(Value::String(name)) if kinds.contains(&name.as_str()) => {
            name.parse::<LengthDistribution>().expect("a name of the vocabulary")
        }
        Some(other) => {
            let what = format!(
                "expected one of {} (a constant length is written as an integer), found {}",
                kinds.join(", "),
                shown(other)
            );
            r.push(&format!("{at}.distribution"), what);
            return None;
        }
    };
    let shaped = distribution != LengthDistribution::Uniform;
    let allowed: &[&str] =
        if shaped { &["distribution", "mean", "stddev", "min", "max"] } else { &["distribution", "min", "max"] };
    let mut bad = false;
    for name in map.keys().filter(|k| !allowed.contains(&k.as_str())) {
        let what = if ["mean", "stddev"].contains(&name.as_str()) {
            format!("a {distribution} distribution has none")
        } else {
            "unknown key".to_string()
        };
        r.push(&format!("{at}.{name}"), what);
        bad = true;
    }
    let bound = |r: &mut Reader, name: &str, default: Option<u32>| match map.get(name) {
        Some(v) => whole(r, &format!("{at}.{name}"), v),
        None if default.is_some() => default,
        None => {
            r.push(&format!("{at}.{name}"), format!("missing: a {distribution} distribution's {name}"));
            None
        }
    };
    // A shaped distribution may leave its bounds out: every whole length it can take.
    let (min, max) = if shaped { (Some(1), Some(largest)) } else { (None, None) };
    let (min, max) = (bound(r, "min", min), bound(r, "max", max));
    let number = |r: &mut Reader, name: &str, check: fn(f64) -> bool, what: &str| {
        let field = format!("{at}.{name}");
        match map.get(name) {
            None => {
                r.push(&field, format!("missing: a {distribution} distribution's {name}"));
                None
            }
            Some(v) => r.number_of(&field, v, |x| if check(x) { Ok(()) } else { Err(format!("{what}, found {x}")) }),
        }
    };
    let (mean, stddev) = if shaped {
        (
            number(r, "mean", |x| x > 0.0, "must be greater than 0"),
            number(r, "stddev", |x| x >= 0.0, "must be 0 or more"),
        )
    } else {
        (None, None)
    };
    let (min, max) = (min?, max?);
    if min > max {
        r.push(&format!("{at}.min"), format!("{min} is above max {max}"));
        return None;
    }
    if let Some(m) = mean.filter(|m| *m < f64::from(min) || *m > f64::from(max)) {
        r.push(&format!("{at}.mean"), format!("{m} lies outside [min, max] = [{min}, {max}]"));
        return None;
    }
    if bad || (shaped && (mean.is_none() || stddev.is_none())) {
        return None;
    }
    Some(TokenLengths { distribution, min, max, mean, stddev })
}
