//! A load run's figures per step and provider, read from `metrics.json`'s `load` section (the
//! contract's `StepMetrics` and `Knee`), and what they say of each provider's capacity: its
//! knee and the highest offered rate at which a step held. A client-bound step's figures are
//! the client's, so neither is ever taken from one.
use anyhow::Result;
use inferbench_contract::documents::{Knee, LoadObjectives, StepMetrics};
use inferbench_contract::vocab::LoadMode;
use inferbench_contract::Error;
use inferbench_store::run::RunDir;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The parts of one run's load section the comparison uses.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadRun {
    /// `metrics.json`'s `run_id` (the lock's).
    pub run_id: String,
    pub mode: LoadMode,
    pub goodput_target: f64,
    /// Steps in order, providers by name within a step, as `metrics.json` lists them.
    pub steps: Vec<StepMetrics>,
    /// Per provider, the step of highest goodput per second among the steps that are not
    /// client-bound (`ib-aggregate`'s definition; a provider whose every step was client-bound
    /// has none).
    pub knees: Vec<Knee>,
}

/// One provider's capacity in one load run.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity<'a> {
    pub provider: &'a str,
    /// The provider's row at its knee.
    pub knee: Option<&'a StepMetrics>,
    /// The provider's row of the highest offered rate that held, among the steps that are not
    /// client-bound.
    pub held: Option<&'a StepMetrics>,
    /// The provider's rows: every step.
    pub steps: usize,
    /// Of those, the client-bound ones (left out of the knee and of `held`).
    pub client_bound: Vec<&'a StepMetrics>,
}

impl LoadRun {
    /// Each provider's capacity, by provider name.
    pub fn capacities(&self) -> Vec<Capacity<'_>> {
        let providers: BTreeSet<&str> = self.steps.iter().map(|s| s.provider.as_str()).collect();
        providers
            .into_iter()
            .map(|provider| {
                let rows: Vec<&StepMetrics> = self.steps.iter().filter(|s| s.provider == provider).collect();
                let knee = self
                    .knees
                    .iter()
                    .find(|k| k.provider == provider)
                    .and_then(|k| rows.iter().copied().find(|s| s.step == k.step));
                let held = rows
                    .iter()
                    .copied()
                    .filter(|s| s.holds && s.client_bound.is_empty())
                    .max_by(|a, b| a.offered_rate.total_cmp(&b.offered_rate).then(b.step.cmp(&a.step)));
                let client_bound = rows.iter().copied().filter(|s| !s.client_bound.is_empty()).collect();
                Capacity { provider, knee, held, steps: rows.len(), client_bound }
            })
            .collect()
    }

    /// Whether `row` is its provider's knee.
    pub fn is_knee(&self, row: &StepMetrics) -> bool {
        self.knees.iter().any(|k| k.provider == row.provider && k.step == row.step)
    }
}

/// What a step asked of each provider, in words: its rate, the trace's speed-up, or its users.
pub fn setting(row: &StepMetrics) -> String {
    match (row.target_rate, row.speedup, row.users) {
        (Some(rate), _, _) => format!("{rate} req/s"),
        (None, Some(speedup), _) => format!("trace ×{speedup}"),
        (None, None, Some(users)) => format!("{users} users"),
        (None, None, None) => format!("step {}", row.step),
    }
}

fn part<T: DeserializeOwned>(load: &mut Value, key: &str, path: &Path, run: &Path) -> Result<T> {
    serde_json::from_value(load[key].take()).map_err(|e| {
        Error::bad(format!(
            "{}: load.{key}: {e} (scored by an older ib-aggregate? make rescore RUN={} derives it again)",
            path.display(),
            run.display()
        ))
        .into()
    })
}

/// The load section of `run`'s `metrics.json`: `None` for a closed-loop run (no section), and
/// for a run without the document (the pooled table is read from its Parquet files).
pub fn read(run: &Path) -> Result<Option<LoadRun>> {
    let path = RunDir::new(run).metrics_json();
    if !path.is_file() {
        return Ok(None);
    }
    let bytes = std::fs::read(&path).map_err(|e| Error::unreadable(&path, e))?;
    let mut doc: Value =
        serde_json::from_slice(&bytes).map_err(|e| Error::bad(format!("{}: not JSON: {e}", path.display())))?;
    let run_id = doc["run_id"].as_str().unwrap_or_default().to_string();
    let load = match doc.get_mut("load") {
        None | Some(Value::Null) => return Ok(None),
        Some(load) => load,
    };
    // Only the parts compared are read, each into its contract type, so a section scored before
    // a later part was added (its timelines) is read as well.
    let mode: LoadMode = part(load, "mode", &path, run)?;
    let objectives: LoadObjectives = part(load, "objectives", &path, run)?;
    let steps: Vec<StepMetrics> = part(load, "steps", &path, run)?;
    let knees: Vec<Knee> = part(load, "knees", &path, run)?;
    for knee in &knees {
        if !steps.iter().any(|s| s.provider == knee.provider && s.step == knee.step) {
            return Err(Error::bad(format!(
                "{}: load.knees: `{}`'s knee, step {}, has no row in load.steps",
                path.display(),
                knee.provider,
                knee.step
            ))
            .into());
        }
    }
    Ok(Some(LoadRun { run_id, mode, goodput_target: objectives.goodput_target, steps, knees }))
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use inferbench_contract::documents::Quantiles;

    /// A step row of `provider` at `rate` req/s.
    pub fn row(step: u32, provider: &str, rate: f64, goodput: f64, holds: bool, client_bound: &[&str]) -> StepMetrics {
        let q = |p50: f64, p99: f64| Quantiles { n: 100, p50: Some(p50), p99: Some(p99), ..Default::default() };
        StepMetrics {
            step,
            provider: provider.into(),
            target_rate: Some(rate),
            speedup: None,
            users: None,
            attempt: 1,
            window_seconds: 10.0,
            offered_rate: rate,
            achieved_rate: rate,
            requests: (rate * 10.0) as u64,
            completed: (rate * 10.0) as u64,
            completed_per_second: rate,
            output_tokens_per_second: rate * 20.0,
            stream_tokens_per_second: Quantiles::default(),
            ttft_ms: q(50.0 * rate, 90.0 * rate),
            ttfa_ms: q(60.0 * rate, 95.0 * rate),
            e2e_ms: q(100.0 * rate, 200.0 * rate),
            ttft_from_send_ms: Quantiles::default(),
            ttfa_from_send_ms: Quantiles::default(),
            e2e_from_send_ms: Quantiles::default(),
            itl_ms: Quantiles::default(),
            tpot_ms: Quantiles::default(),
            send_lag_ms: q(0.1, 0.5),
            queued_ms: Quantiles::default(),
            outcomes: Vec::new(),
            goodput: Some(goodput),
            goodput_without_lag: Some(goodput),
            goodput_per_second: goodput * rate,
            accuracy: Some(0.9),
            holds,
            client_bound: client_bound.iter().map(|s| s.to_string()).collect(),
            client_cpu_seconds: None,
            peak_in_flight: 4,
        }
    }

    /// A load run of two providers over rates 4, 8 and 16: `a` holds to 8 and peaks at 8;
    /// `b` holds at 4 and 8 too, but its step at 16 is client-bound (and "held").
    pub fn sweep() -> LoadRun {
        let steps = vec![
            row(0, "a", 4.0, 1.0, true, &[]),
            row(0, "b", 4.0, 1.0, true, &[]),
            row(1, "a", 8.0, 0.95, true, &[]),
            row(1, "b", 8.0, 0.9, true, &[]),
            row(2, "a", 16.0, 0.4, false, &[]),
            row(2, "b", 16.0, 1.0, true, &["send lag p99 3.2 ms > 1 ms"]),
        ];
        let knee = |provider: &str, step: u32| {
            let s = steps.iter().find(|s| s.provider == provider && s.step == step).unwrap();
            Knee {
                provider: provider.into(),
                step,
                offered_rate: s.offered_rate,
                goodput_per_second: s.goodput_per_second,
            }
        };
        let knees = vec![knee("a", 1), knee("b", 1)];
        LoadRun { run_id: "r".into(), mode: LoadMode::OpenLoop, goodput_target: 0.9, steps, knees }
    }

    #[test]
    fn capacity_is_the_knee_and_the_highest_rate_held_and_never_a_client_bound_step() {
        let run = sweep();
        let c = run.capacities();
        assert_eq!(c.iter().map(|c| c.provider).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!((c[0].knee.unwrap().step, c[0].held.unwrap().step, c[0].steps), (1, 1, 3));
        assert!(c[0].client_bound.is_empty());
        // b's step at 16 req/s held with the best goodput, but its figures are the client's.
        assert_eq!((c[1].knee.unwrap().step, c[1].held.unwrap().offered_rate), (1, 8.0));
        assert_eq!(c[1].client_bound.iter().map(|s| s.step).collect::<Vec<_>>(), [2]);
        assert!(run.is_knee(&run.steps[2]) && !run.is_knee(&run.steps[4]));
        // A provider whose every step is client-bound has neither.
        let bound = LoadRun {
            steps: vec![row(0, "c", 4.0, 1.0, true, &["achieved 3.5 req/s < 99% of 4"])],
            knees: vec![],
            ..sweep()
        };
        let c = bound.capacities();
        assert_eq!((c[0].knee, c[0].held, c[0].client_bound.len()), (None, None, 1));
    }

    #[test]
    fn a_step_is_named_by_what_it_asked() {
        let mut r = row(3, "a", 4.0, 1.0, true, &[]);
        assert_eq!(setting(&r), "4 req/s");
        r.target_rate = Some(2.5);
        assert_eq!(setting(&r), "2.5 req/s");
        (r.target_rate, r.speedup) = (None, Some(2.0));
        assert_eq!(setting(&r), "trace ×2");
        (r.speedup, r.users) = (None, Some(8));
        assert_eq!(setting(&r), "8 users");
        r.users = None;
        assert_eq!(setting(&r), "step 3");
    }

    #[test]
    fn the_load_section_is_read_from_metrics_json_and_a_closed_loop_run_has_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None, "no metrics.json");
        let metrics = dir.path().join("metrics.json");
        std::fs::write(&metrics, r#"{"run_id": "x", "ranking": []}"#).unwrap();
        assert_eq!(read(dir.path()).unwrap(), None, "a closed-loop run");
        let run = sweep();
        // As ib-aggregate writes it, with the parts not compared (timelines, definitions) present or not.
        let section = serde_json::json!({
            "mode": "open_loop",
            "arrivals": "constant",
            "objectives": {"ttft_ms": null, "ttfa_ms": null, "tpot_ms": null, "itl_ms": null, "e2e_ms": 500.0,
                           "correct": false, "goodput_target": 0.9},
            "steps": run.steps,
            "knees": run.knees,
        });
        let doc = serde_json::json!({"run_id": "r", "load": section});
        std::fs::write(&metrics, serde_json::to_vec(&doc).unwrap()).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(run.clone()));
        // A knee that names no step row is refused, as is a step row that is not one.
        let mut bad = doc.clone();
        bad["load"]["knees"][0]["step"] = 7.into();
        std::fs::write(&metrics, serde_json::to_vec(&bad).unwrap()).unwrap();
        let err = read(dir.path()).unwrap_err();
        assert!(err.to_string().contains("step 7, has no row"), "{err}");
        let mut bad = doc;
        bad["load"]["steps"][0]["offered_rate"] = "fast".into();
        std::fs::write(&metrics, serde_json::to_vec(&bad).unwrap()).unwrap();
        let err = read(dir.path()).unwrap_err();
        assert!(err.to_string().contains("load.steps") && err.to_string().contains("make rescore"), "{err}");
        assert_eq!(inferbench_cli::exit_for(&err), inferbench_cli::Exit::BadInput);
    }
}
