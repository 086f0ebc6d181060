//! What the run holds, by outcome class and answer: printed as one JSON line on stdout.
use std::collections::BTreeMap;

#[derive(Debug, Default, serde::Serialize)]
pub struct Summary {
    pub requests: u64,
    pub rounds: u64,
    pub events: u64,
    pub log_bytes: u64,
    /// Requests by `operational_outcome`, keyed by the class's name as the files write it
    /// (`2xx`, `timeout`, `429`, …), so the line lists them in the order of their names.
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Completed requests whose answer is the gold.
    pub correct_answers: u64,
    pub generate_seconds: f64,
    pub seal_seconds: Option<f64>,
    pub sealed_rows: Option<u64>,
}

impl Summary {
    /// The line on stderr once the log is written.
    pub fn written(&self) -> String {
        format!(
            "ib-synth: {} requests in {} rounds, {} events, {:.1} MB of JSONL in {:.1} s",
            self.requests,
            self.rounds,
            self.events,
            self.log_bytes as f64 / 1e6,
            self.generate_seconds
        )
    }
}
