//! `metrics.json`'s `cache_probe` section: how much faster each provider answered a prompt it
//! had just been sent (`inference.cache_probe`).
//!
//! Each probe round is sent twice, paired: first a prompt no provider has been sent before
//! (its nonce is new), then, right after every provider's first send ended, the same bytes
//! again. A provider that caches prompts serves the repeat from its cache; one that does not
//! serves both alike. The figure is, per provider, the median of the paired differences
//! `TTFA(first) − TTFA(repeat)` over the probe rounds where both sends have a TTFA, with the
//! distribution-free 95 % order-statistic interval of that median.
use super::PercentileValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The section; absent when the spec asks for no probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheProbeMetrics {
    /// Probe rounds scheduled (`inference.cache_probe.rounds`), each sent twice.
    pub rounds: i64,
    /// How the figures are computed, in words.
    pub method: String,
    /// One row per provider, by name.
    pub providers: Vec<CacheProbeProvider>,
}

/// One provider's probe figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheProbeProvider {
    pub provider: String,
    /// Probe rounds where both the first send and the repeat have a TTFA: the paired samples.
    pub paired_count: i64,
    /// Probe rounds left out because one of the two sends has no TTFA (it failed, or never
    /// answered), or was never logged.
    pub unpaired_count: i64,
    /// The nearest-rank p50 of the first sends' TTFA over the paired rounds, ms.
    pub first_ttfa_p50_ms: Option<f64>,
    /// The nearest-rank p50 of the repeats' TTFA over the paired rounds, ms.
    pub repeat_ttfa_p50_ms: Option<f64>,
    /// The nearest-rank p50 of `TTFA(first) − TTFA(repeat)` over the paired rounds, ms, with
    /// its 95 % order-statistic interval (null with a `note` under 6 pairs, too few for any
    /// 95 % interval of a median). Positive: the repeat was faster.
    pub ttfa_difference_ms: PercentileValue,
    /// Whether the interval lies wholly above 0 (`faster_repeat`), wholly below
    /// (`slower_repeat`), holds 0 (`no_difference_shown`), or there is none (`too_few_pairs`).
    pub verdict: CacheProbeVerdict,
}

/// What a provider's probe interval shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheProbeVerdict {
    FasterRepeat,
    SlowerRepeat,
    NoDifferenceShown,
    TooFewPairs,
}

impl CacheProbeVerdict {
    /// The verdict as the files spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheProbeVerdict::FasterRepeat => "faster_repeat",
            CacheProbeVerdict::SlowerRepeat => "slower_repeat",
            CacheProbeVerdict::NoDifferenceShown => "no_difference_shown",
            CacheProbeVerdict::TooFewPairs => "too_few_pairs",
        }
    }
}
