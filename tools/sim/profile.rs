//! The profile file: what each simulated provider looks like, parsed strictly and validated
//! before the server binds, so a typo is a one-line error naming the provider and the field
//! rather than a provider that silently behaves like the defaults.
pub use crate::fault::{Fault, Faults};
pub use crate::wire::LineEnding;
use inferbench_inputs::providers::slug;
use inferbench_stats::rng::normal_quantile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A profile file that cannot be used. Exit code 3 (bad input).
#[derive(Debug)]
pub enum ProfileError {
    Read { path: PathBuf, source: std::io::Error },
    Parse { path: PathBuf, message: String },
    Invalid { path: PathBuf, field: String, message: String },
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileError::Read { path, source } => {
                write!(f, "{}: cannot read: {source}", path.display())
            }
            ProfileError::Parse { path, message } => write!(f, "{}: {message}", path.display()),
            ProfileError::Invalid { path, field, message } => {
                write!(f, "{}: {field}: {message}", path.display())
            }
        }
    }
}

// No `source()`: the message already ends with the I/O error, and `{:#}` would repeat it.
impl std::error::Error for ProfileError {}

/// A bad profile file is bad input of the contract (exit code 3 through `cli::finish`); one that
/// cannot be read keeps its I/O error as the cause.
impl From<ProfileError> for inferbench_contract::Error {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::Read { path, source } => inferbench_contract::Error::unreadable(path, source),
            other => inferbench_contract::Error::BadInput(other.to_string()),
        }
    }
}

/// Whether a chat completions stream ends with a usage chunk (`choices: []`, `usage: {...}`).
/// Responses and Messages streams always carry usage (in the terminal event, in
/// `message_start` and `message_delta`), whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageChunk {
    /// If and only if the request asked for it with `stream_options.include_usage: true`,
    /// as OpenAI does. The default.
    #[default]
    AsRequested,
    /// Always: the provider ignores `include_usage` and sends usage unasked.
    Always,
    /// Never: the provider ignores `include_usage` and sends no usage even when asked.
    Never,
}

impl UsageChunk {
    pub fn sends(self, requested: bool) -> bool {
        match self {
            UsageChunk::AsRequested => requested,
            UsageChunk::Always => true,
            UsageChunk::Never => false,
        }
    }
}

/// How the outcome and the timing quantiles of request n are drawn (see `stratified.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// Low-discrepancy over the request counter: rates and percentiles are reproduced almost
    /// exactly by any few hundred consecutive requests. The default.
    Stratified,
    /// Independent draws per request: realistic run-to-run noise.
    Independent,
}

/// The whole file, validated.
#[derive(Debug, Clone)]
pub struct Profiles {
    pub time_scale: f64,
    pub sampling: Sampling,
    /// Keyed by slug.
    pub providers: BTreeMap<String, Profile>,
}

/// One provider, validated.
#[derive(Debug, Clone)]
pub struct Profile {
    pub slug: String,
    pub model: String,
    pub ttft_ms: QuantileDist,
    pub tokens_per_second: QuantileDist,
    pub reasoning: Reasoning,
    pub reasoning_field: String,
    pub tokens_per_chunk: usize,
    pub accuracy: f64,
    pub usage_chunk: UsageChunk,
    /// The end of every line the simulator writes in an event stream.
    pub line_ending: LineEnding,
    /// Each event is written as two body frames, cut inside a multi-byte character when the
    /// event has one (and the simulated model writes non-ASCII, see `answer::for_split_utf8`).
    pub split_utf8: bool,
    pub faults: Faults,
    /// The requests the provider serves at once; a request over them waits in a FIFO queue
    /// until one ends, and its TTFT is drawn from when it is served (`None`: no limit).
    pub slots: Option<u32>,
    /// A prompt cache (`None`: the provider keeps none; every prompt costs the same).
    pub prompt_cache: Option<PromptCache>,
    /// How the provider departs from the official Responses and Messages grammars (the
    /// default: not at all). Chat completions streams are unaffected.
    pub dialect: Dialect,
}

/// `dialect`: the departures from the official Responses and Messages streaming grammars
/// that real servers make (each `false` by default; any combination may be set). They
/// change the wire format only: the timing, the tokens and the fault draws are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Dialect {
    /// Responses: no `sequence_number`, `output_index`, `content_index` or `summary_index`
    /// on any event (llama.cpp).
    pub no_indices: bool,
    /// Responses and Messages: data-only SSE, no `event:` lines (LiteLLM); the JSON `type`
    /// names each event.
    pub data_only: bool,
    /// Responses: a `data: [DONE]` event after the terminal event (LiteLLM).
    pub done_after_terminal: bool,
    /// Responses and Messages: the reasoning item (thinking block) is closed only after the
    /// answer's last delta, while the message item (text block) is open (llama.cpp): its
    /// closing events come first at the finish.
    pub reasoning_closed_late: bool,
    /// Messages: `message_start` carries zero usage; the full usage (input and output tokens)
    /// comes in `message_delta` (LiteLLM).
    pub usage_at_end: bool,
    /// Responses: reasoning as raw `response.reasoning_text.delta` events (and one
    /// `response.reasoning_text.done`) instead of the summary events (llama.cpp).
    pub reasoning_text: bool,
    /// Messages: no `ping` after `message_start` (llama.cpp, LiteLLM).
    pub no_ping: bool,
}

/// `prompt_cache`: the provider remembers every prompt it has received (its `messages`, byte
/// for byte as the JSON body spells them) for as long as the simulator runs, and answers a
/// prompt it has seen after `ttft_factor` × the drawn TTFT, as a provider serving the prompt's
/// prefill from its cache does. What else is drawn (faults, speed, answer) is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptCache {
    /// In (0, 1]: how much of the drawn TTFT a cached prompt still takes.
    pub ttft_factor: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reasoning {
    /// Mean number of reasoning tokens; each request draws uniformly in [mean/2, 3·mean/2].
    pub mean: f64,
    /// Reasoning is streamed evenly between these fractions of the drawn TTFT: a provider
    /// first queues and prefills (silence), then thinks, then answers.
    #[serde(default = "default_reasoning_start")]
    pub start_fraction: f64,
    #[serde(default = "default_reasoning_end")]
    pub end_fraction: f64,
}

fn default_reasoning_start() -> f64 {
    0.3
}
fn default_reasoning_end() -> f64 {
    0.9
}

impl Default for Reasoning {
    fn default() -> Self {
        Reasoning { mean: 0.0, start_fraction: default_reasoning_start(), end_fraction: default_reasoning_end() }
    }
}

/// A positive distribution given by a few of its quantiles, interpolated linearly in
/// (normal z, log value) space and extrapolated with the outermost slopes. With two points
/// it is exactly a lognormal; extra points let the body and the tail differ, which the
/// published figures need (a narrow body with a long tail for some providers, the reverse
/// for others).
#[derive(Debug, Clone, PartialEq)]
pub struct QuantileDist {
    /// (z, ln value), strictly increasing in both.
    points: Vec<(f64, f64)>,
}

impl QuantileDist {
    /// `quantiles`: (probability, value) pairs; at least two.
    pub(crate) fn new(quantiles: &[(f64, f64)]) -> Self {
        let mut points: Vec<(f64, f64)> = quantiles.iter().map(|&(p, v)| (normal_quantile(p), v.ln())).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        QuantileDist { points }
    }

    /// The value at cumulative probability `u` in (0, 1).
    pub fn sample(&self, u: f64) -> f64 {
        let z = normal_quantile(u);
        let p = &self.points;
        let i = p.iter().position(|&(zi, _)| zi > z).unwrap_or(p.len()).clamp(1, p.len() - 1);
        let (z0, l0) = p[i - 1];
        let (z1, l1) = p[i];
        (l0 + (z - z0) * (l1 - l0) / (z1 - z0)).exp()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default = "one")]
    time_scale: f64,
    #[serde(default = "stratified")]
    sampling: Sampling,
    providers: BTreeMap<String, RawProfile>,
}

fn one() -> f64 {
    1.0
}
fn stratified() -> Sampling {
    Sampling::Stratified
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    model: String,
    ttft_ms: RawTtft,
    tokens_per_second: RawRate,
    #[serde(default)]
    reasoning_tokens: Reasoning,
    #[serde(default = "reasoning_content")]
    reasoning_field: String,
    #[serde(default = "one_token")]
    tokens_per_chunk: i64,
    #[serde(default = "one")]
    accuracy: f64,
    #[serde(default)]
    usage_chunk: UsageChunk,
    #[serde(default)]
    line_ending: LineEnding,
    #[serde(default)]
    split_utf8: bool,
    #[serde(default)]
    faults: Faults,
    #[serde(default)]
    slots: Option<i64>,
    #[serde(default)]
    prompt_cache: Option<PromptCache>,
    #[serde(default)]
    dialect: Dialect,
}

fn reasoning_content() -> String {
    "reasoning_content".into()
}
fn one_token() -> i64 {
    1
}

/// Latency: the median and the p99 are required; p75, p90 and p95 shape the body, p999 the
/// extreme tail (otherwise the p95..p99 slope continues, which for a heavy tail can put the
/// rare slowest request past any client timeout).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTtft {
    median: f64,
    p75: Option<f64>,
    p90: Option<f64>,
    p95: Option<f64>,
    p99: f64,
    p999: Option<f64>,
}

/// Speed: the median and the p05 floor are required; p25, p10 and p01 shape the slow tail.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRate {
    median: f64,
    p25: Option<f64>,
    p10: Option<f64>,
    p05: f64,
    p01: Option<f64>,
}

type Invalid = (String, String);

impl Profiles {
    pub fn load(path: &Path) -> Result<Profiles, ProfileError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ProfileError::Read { path: path.to_path_buf(), source })?;
        Profiles::parse(&text, path)
    }

    /// `path` is only used to name the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Profiles, ProfileError> {
        let raw: RawFile = serde_norway::from_str(text)
            .map_err(|e| ProfileError::Parse { path: path.to_path_buf(), message: e.to_string() })?;
        validate(raw).map_err(|(field, message)| ProfileError::Invalid { path: path.to_path_buf(), field, message })
    }
}

fn validate(raw: RawFile) -> Result<Profiles, Invalid> {
    if !(raw.time_scale.is_finite() && raw.time_scale >= 0.0) {
        return Err(("time_scale".into(), format!("must be a finite number >= 0, got {}", raw.time_scale)));
    }
    if raw.providers.is_empty() {
        return Err(("providers".into(), "at least one provider is required".into()));
    }
    let mut providers = BTreeMap::new();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for (name, rp) in raw.providers {
        let s = slug(&name);
        let at = |field: &str| format!("providers.{name}.{field}");
        if s.is_empty() {
            return Err((format!("providers.{name}"), "the name has no letters or digits to make a URL slug".into()));
        }
        if let Some(other) = names.insert(s.clone(), name.clone()) {
            return Err((format!("providers.{name}"), format!("slug \"{s}\" is also the slug of \"{other}\"")));
        }
        providers.insert(s.clone(), validate_profile(s, rp, &at)?);
    }
    Ok(Profiles { time_scale: raw.time_scale, sampling: raw.sampling, providers })
}

fn validate_profile(slug: String, rp: RawProfile, at: &dyn Fn(&str) -> String) -> Result<Profile, Invalid> {
    if rp.model.trim().is_empty() {
        return Err((at("model"), "must be a non-empty model id".into()));
    }
    let t = &rp.ttft_ms;
    let ttft = quantiles(
        &[
            (0.5, "median", Some(t.median)),
            (0.75, "p75", t.p75),
            (0.9, "p90", t.p90),
            (0.95, "p95", t.p95),
            (0.99, "p99", Some(t.p99)),
            (0.999, "p999", t.p999),
        ],
        &at("ttft_ms"),
    )?;
    let r = &rp.tokens_per_second;
    let rate = quantiles(
        &[
            (0.01, "p01", r.p01),
            (0.05, "p05", Some(r.p05)),
            (0.1, "p10", r.p10),
            (0.25, "p25", r.p25),
            (0.5, "median", Some(r.median)),
        ],
        &at("tokens_per_second"),
    )?;
    let rs = rp.reasoning_tokens;
    if !(rs.mean.is_finite() && rs.mean >= 0.0) {
        return Err((at("reasoning_tokens.mean"), format!("must be a finite number >= 0, got {}", rs.mean)));
    }
    if !(0.0..=1.0).contains(&rs.start_fraction) || !(rs.start_fraction..=1.0).contains(&rs.end_fraction) {
        return Err((
            at("reasoning_tokens"),
            format!("need 0 <= start_fraction <= end_fraction <= 1, got {} and {}", rs.start_fraction, rs.end_fraction),
        ));
    }
    if rp.reasoning_field.is_empty() || ["content", "role", "tool_calls"].contains(&rp.reasoning_field.as_str()) {
        return Err((
            at("reasoning_field"),
            format!("\"{}\" cannot carry reasoning; use e.g. reasoning_content or reasoning", rp.reasoning_field),
        ));
    }
    if rp.tokens_per_chunk < 1 {
        return Err((at("tokens_per_chunk"), format!("must be >= 1, got {}", rp.tokens_per_chunk)));
    }
    probability(rp.accuracy, &at("accuracy"))?;
    let f = rp.faults;
    for fault in Fault::ALL {
        probability(f.probability(fault), &at(&format!("faults.{}", fault.key())))?;
    }
    for (name, ms) in [("stall_before_ms", f.stall_before_ms), ("stall_during_ms", f.stall_during_ms)] {
        if !(ms.is_finite() && ms >= 0.0) {
            return Err((at(&format!("faults.{name}")), format!("must be a finite number of ms >= 0, got {ms}")));
        }
    }
    // A small tolerance: probabilities written as decimals may add up to 1.0000000000000002.
    if f.total() > 1.0 + 1e-9 {
        return Err((at("faults"), format!("the fault probabilities add up to {} > 1", f.total())));
    }
    // The oversized line is a whole chunk: it cannot be shorter than the chunk around its
    // filler, for the longest request id this provider can give, on any of its routes.
    let min = crate::chunk::oversized_line_min_bytes(&slug, &rp.model)
        .max(crate::chunk::responses::oversized_line_min_bytes(&slug))
        .max(crate::chunk::messages::oversized_line_min_bytes());
    if f.oversized_bytes < min {
        return Err((
            at("faults.oversized_bytes"),
            format!("must be at least {min} (the chunk around the filler), got {}", f.oversized_bytes),
        ));
    }
    let slots = match rp.slots {
        None => None,
        Some(n @ 1..=1_000_000) => Some(n as u32),
        Some(n) => return Err((at("slots"), format!("must be from 1 to 1000000 requests served at once, got {n}"))),
    };
    if let Some(cache) = rp.prompt_cache {
        let f = cache.ttft_factor;
        if !(f.is_finite() && f > 0.0 && f <= 1.0) {
            return Err((at("prompt_cache.ttft_factor"), format!("must be in (0, 1], got {f}")));
        }
    }
    Ok(Profile {
        dialect: rp.dialect,
        prompt_cache: rp.prompt_cache,
        slots,
        slug,
        model: rp.model,
        ttft_ms: ttft,
        tokens_per_second: rate,
        reasoning: rs,
        reasoning_field: rp.reasoning_field,
        tokens_per_chunk: rp.tokens_per_chunk as usize,
        accuracy: rp.accuracy,
        usage_chunk: rp.usage_chunk,
        line_ending: rp.line_ending,
        split_utf8: rp.split_utf8,
        faults: f,
    })
}

fn probability(p: f64, field: &str) -> Result<(), Invalid> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err((field.into(), format!("must be a probability in [0, 1], got {p}")))
    }
}

/// `given`: (probability, key, value) in increasing probability; values must be positive
/// and strictly increasing.
fn quantiles(given: &[(f64, &str, Option<f64>)], field: &str) -> Result<QuantileDist, Invalid> {
    let mut prev: Option<(&str, f64)> = None;
    let mut points = Vec::new();
    for &(p, key, value) in given {
        let Some(v) = value else { continue };
        if !(v.is_finite() && v > 0.0) {
            return Err((format!("{field}.{key}"), format!("must be a finite number > 0, got {v}")));
        }
        if let Some((pk, pv)) = prev {
            if v <= pv {
                return Err((format!("{field}.{key}"), format!("must be greater than {pk} ({pv}), got {v}")));
            }
        }
        prev = Some((key, v));
        points.push((p, v));
    }
    Ok(QuantileDist::new(&points))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::NonSseKind;

    const MINIMAL: &str = "
providers:
  Z.AI:
    model: glm-5.3-flash
    ttft_ms: {median: 1000, p99: 5000}
    tokens_per_second: {median: 60, p05: 30}
";

    fn parse(text: &str) -> Result<Profiles, ProfileError> {
        Profiles::parse(text, Path::new("p.yaml"))
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    /// Providers are served under the contract's slug, the one the fetch client calls.
    /// U+212A KELVIN SIGN lowercases to ASCII `k` under Unicode rules, which gave the route
    /// `kelvin-ai`; the contract keeps ASCII letters and digits only, so the fetch client
    /// calls `elvin-ai`.
    #[test]
    fn routes_are_the_contract_slug() {
        let name = "\u{212A}elvin.AI";
        let p = parse(&MINIMAL.replace("Z.AI:", "\"\\u212Aelvin.AI\":")).unwrap();
        let routes: Vec<&str> = p.providers.keys().map(String::as_str).collect();
        assert_eq!(routes, [inferbench_inputs::providers::slug(name).as_str()]);
        assert_eq!(routes, ["elvin-ai"]);
        assert_eq!(p.providers["elvin-ai"].slug, "elvin-ai");
    }

    #[test]
    fn minimal_profile_gets_defaults() {
        let p = parse(MINIMAL).unwrap();
        assert_eq!(p.time_scale, 1.0);
        assert_eq!(p.sampling, Sampling::Stratified);
        let z = &p.providers["z-ai"];
        assert_eq!(z.slug, "z-ai");
        assert_eq!(z.tokens_per_chunk, 1);
        assert_eq!(z.accuracy, 1.0);
        assert_eq!(z.reasoning_field, "reasoning_content");
        assert_eq!(z.reasoning.mean, 0.0);
        assert_eq!(z.usage_chunk, UsageChunk::AsRequested);
        assert_eq!(z.line_ending, LineEnding::Lf);
        assert!(!z.split_utf8);
        assert_eq!(z.faults.non_sse_kind, NonSseKind::Json);
        assert_eq!(z.faults.oversized_bytes, 10_000_000);
        assert_eq!(z.faults.total(), 0.0);
        assert_eq!(z.faults.stall_before_ms, 25_000.0);
        assert_eq!(z.prompt_cache, None);
    }

    #[test]
    fn a_prompt_cache_is_a_ttft_factor_in_0_to_1() {
        let p = parse(&format!("{MINIMAL}    prompt_cache: {{ttft_factor: 0.25}}\n")).unwrap();
        assert_eq!(p.providers["z-ai"].prompt_cache, Some(PromptCache { ttft_factor: 0.25 }));
        for bad in ["0", "1.5", "-0.1", ".nan"] {
            let e = err(&format!("{MINIMAL}    prompt_cache: {{ttft_factor: {bad}}}\n"));
            assert!(e.contains("providers.Z.AI.prompt_cache.ttft_factor: must be in (0, 1]"), "{bad}: {e}");
        }
        let e = err(&format!("{MINIMAL}    prompt_cache: {{ttl: 5}}\n"));
        assert!(e.contains("ttl"), "{e}");
    }

    #[test]
    fn two_point_distribution_is_lognormal() {
        let z = &parse(MINIMAL).unwrap().providers["z-ai"];
        assert!((z.ttft_ms.sample(0.5) - 1000.0).abs() < 1e-6);
        assert!((z.ttft_ms.sample(0.99) - 5000.0).abs() < 1e-3);
        assert!((z.tokens_per_second.sample(0.05) - 30.0).abs() < 1e-6);
        // Lognormal symmetry in log space: p01 * p99 = median^2.
        let lo = z.ttft_ms.sample(0.01);
        assert!((lo * 5000.0 - 1e6).abs() < 1.0, "{lo}");
    }

    #[test]
    fn extra_quantiles_shape_the_body() {
        let text =
            MINIMAL.replace("{median: 1000, p99: 5000}", "{median: 1000, p75: 1100, p95: 3000, p99: 5000, p999: 6000}");
        let d = &parse(&text).unwrap().providers["z-ai"].ttft_ms;
        for (u, v) in [(0.5, 1000.0), (0.75, 1100.0), (0.95, 3000.0), (0.99, 5000.0), (0.999, 6000.0)] {
            assert!((d.sample(u) / v - 1.0).abs() < 1e-6, "{u}: {}", d.sample(u));
        }
        // Below the median it continues the median..p75 slope.
        assert!(d.sample(0.25) > 900.0 && d.sample(0.25) < 1000.0);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let e = err(&MINIMAL.replace("model:", "modle: x\n    model:"));
        assert!(e.contains("p.yaml") && e.contains("modle"), "{e}");
        let e = err(&format!("{MINIMAL}    faults: {{http_503: 0.1}}\n"));
        assert!(e.contains("http_503"), "{e}");
        let e = err(&format!("{MINIMAL}timescale: 2\n"));
        assert!(e.contains("timescale"), "{e}");
    }

    #[test]
    fn validation_names_provider_and_field() {
        let cases = [
            (format!("{MINIMAL}    accuracy: 1.5\n"), "providers.Z.AI.accuracy: must be a probability"),
            (format!("{MINIMAL}    tokens_per_chunk: 0\n"), "providers.Z.AI.tokens_per_chunk: must be >= 1"),
            (format!("{MINIMAL}    faults: {{http_429: -0.1}}\n"), "providers.Z.AI.faults.http_429"),
            (format!("{MINIMAL}    faults: {{http_429: 0.6, http_5xx: 0.6}}\n"), "providers.Z.AI.faults: the fault probabilities add up"),
            (format!("{MINIMAL}    faults: {{stall_before_ms: -1}}\n"), "providers.Z.AI.faults.stall_before_ms"),
            (format!("{MINIMAL}    faults: {{redirect: 1.5}}\n"), "providers.Z.AI.faults.redirect: must be a probability"),
            (format!("{MINIMAL}    faults: {{redirect: 0.5, credential_echo: 0.6}}\n"), "providers.Z.AI.faults: the fault probabilities add up"),
            (format!("{MINIMAL}    faults: {{oversized_bytes: 100}}\n"), "providers.Z.AI.faults.oversized_bytes: must be at least"),
            (format!("{MINIMAL}    faults: {{non_sse_kind: xml}}\n"), "non_sse_kind"),
            (format!("{MINIMAL}    line_ending: crlf2\n"), "line_ending"),
            (format!("{MINIMAL}    usage_chunk: sometimes\n"), "usage_chunk"),
            (format!("{MINIMAL}    stream_usage: true\n"), "stream_usage"),
            (format!("{MINIMAL}    reasoning_field: content\n"), "providers.Z.AI.reasoning_field"),
            (format!("{MINIMAL}    reasoning_tokens: {{mean: -3}}\n"), "providers.Z.AI.reasoning_tokens.mean"),
            (format!("{MINIMAL}    reasoning_tokens: {{mean: 3, start_fraction: 0.8, end_fraction: 0.5}}\n"), "providers.Z.AI.reasoning_tokens"),
            (MINIMAL.replace("p99: 5000", "p99: 900"), "providers.Z.AI.ttft_ms.p99: must be greater than median (1000)"),
            (MINIMAL.replace("p05: 30", "p05: 0"), "providers.Z.AI.tokens_per_second.p05: must be a finite number > 0"),
            (MINIMAL.replace("p05: 30", "p05: 70"), "providers.Z.AI.tokens_per_second.median: must be greater than p05"),
            (MINIMAL.replace("glm-5.3-flash", "''"), "providers.Z.AI.model"),
            (format!("time_scale: -1\n{MINIMAL}"), "p.yaml: time_scale"),
            ("providers: {}\n".to_string(), "providers: at least one"),
            (format!("{MINIMAL}  z ai:\n    model: m\n    ttft_ms: {{median: 1, p99: 2}}\n    tokens_per_second: {{median: 2, p05: 1}}\n"), "also the slug of"),
        ];
        for (text, want) in cases {
            let e = err(&text);
            assert!(e.contains(want), "want {want:?} in {e:?}");
        }
    }

    #[test]
    fn yaml_syntax_errors_name_the_file() {
        let e = err("providers: [\n");
        assert!(e.starts_with("p.yaml: "), "{e}");
    }
}
