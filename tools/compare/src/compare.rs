//! The order of work: find the runs, read each one (two worker threads, each run's tables
//! dropped once its figures are computed, so memory does not grow with the number of runs),
//! bootstrap every pair, then build the cross-run tables and write them.
use crate::bootstrap::{Interval, RankTable, Settings};
use crate::discover::RunInfo;
use crate::load::{self, Pooled, Samples, HEADLINE};
use crate::under_load::{self, LoadRun};
use anyhow::{Context, Result};
use inferbench_contract::metrics::{Column, Metric, E2E_LATENCY, TTFA};
use inferbench_store::run::RunDir;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The two paired metrics of the catalogue, with their samples; each is named in the outputs
/// by its column of responses.parquet (`load::sample_column`).
pub const PAIRED: [(&Metric, Pick); 2] = [(E2E_LATENCY, load::e2e), (TTFA, load::ttfa)];

/// A paired metric's samples of one provider.
pub type Pick = fn(&Samples) -> &[Option<f64>];

/// Everything the outputs need from one run.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub info: RunInfo,
    pub pooled_source: &'static str,
    pub pooled: Vec<Pooled>,
    pub pairs: Vec<PairResult>,
    pub response_rows: usize,
    /// A load run's figures per step and provider (`metrics.json`'s `load` section); `None`
    /// for a closed-loop run.
    pub load: Option<LoadRun>,
    /// Each provider's drift figures (by name): success, agreement, answer lengths, usage.
    pub drift: BTreeMap<String, crate::drift::figures::Figures>,
    /// SHA-256 of the files read: responses, evaluations, the pooled table, the manifest and
    /// `metrics.json` (when present).
    pub inputs: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PairResult {
    pub provider_a: String,
    pub provider_b: String,
    pub metric: &'static Metric,
    /// Rounds where both providers have a response.
    pub shared_rounds: usize,
    /// `None` without a single paired sample.
    pub interval: Option<Interval>,
    /// The fewest paired samples a verdict needs at the run's confidence
    /// ([`crate::bootstrap::min_pairs`]).
    pub min_pairs: usize,
}

/// The verdict of a pair whose sample cannot support the confidence claimed.
pub const TOO_FEW: &str = "too_few_rounds";

impl PairResult {
    /// `too_few_rounds` under [`PairResult::min_pairs`] paired samples (the interval is still
    /// given, but no interval of so few can have the coverage claimed); else `a_faster` when
    /// the whole interval is below zero, `b_faster` above, else `inconclusive`.
    pub fn verdict(&self) -> &'static str {
        match self.interval {
            Some(i) if i.n < self.min_pairs => TOO_FEW,
            Some(i) if i.high < 0.0 => "a_faster",
            Some(i) if i.low > 0.0 => "b_faster",
            Some(_) => "inconclusive",
            None => "no_pairs",
        }
    }
}

/// Rank tables drawn on first use, one per sample size, shared by all pairs and threads.
#[derive(Default)]
struct Tables {
    by_n: Mutex<HashMap<usize, Arc<OnceLock<RankTable>>>>,
}

impl Tables {
    fn get(&self, settings: &Settings, n: usize) -> Arc<OnceLock<RankTable>> {
        let cell = self.by_n.lock().unwrap().entry(n).or_default().clone();
        cell.get_or_init(|| RankTable::draw(settings, n));
        cell
    }
}

/// One run read and bootstrapped.
fn one(path: &Path, settings: &Settings, tables: &Tables) -> Result<RunResult> {
    let info = RunInfo::read(path)?;
    let (pooled, pooled_source, responses) = load::run_tables(path)?;
    let response_rows = responses.values().map(|s| s.rounds.len()).sum();
    let providers: Vec<(&String, &Samples)> = responses.iter().collect();
    let mut pairs = Vec::new();
    for (i, (a, sa)) in providers.iter().enumerate() {
        for (b, sb) in &providers[i + 1..] {
            for (metric, pick) in PAIRED {
                let (mut differences, shared_rounds) = load::paired(sa, sb, pick);
                let interval = (!differences.is_empty()).then(|| {
                    let cell = tables.get(settings, differences.len());
                    crate::bootstrap::interval(settings, cell.get().unwrap(), &mut differences)
                });
                pairs.push(PairResult {
                    provider_a: a.to_string(),
                    provider_b: b.to_string(),
                    metric,
                    shared_rounds,
                    interval,
                    min_pairs: crate::bootstrap::min_pairs(settings.confidence),
                });
            }
        }
    }
    let load = under_load::read(path).with_context(|| format!("reading {}", path.display()))?;
    let drift = crate::drift::figures::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut inputs = BTreeMap::new();
    let pooled_file = if pooled_source == load::POOLED_TABLE { RunDir::POOLED } else { RunDir::METRICS_PARQUET };
    for file in [RunDir::RESPONSES, RunDir::EVALUATIONS, pooled_file, RunDir::MANIFEST, RunDir::METRICS_JSON] {
        let full = path.join(file);
        if full.is_file() {
            inputs.insert(file.to_string(), inferbench_contract::canonical::file_sha256(&full)?);
        }
    }
    Ok(RunResult { info, pooled_source, pooled, pairs, response_rows, load, drift, inputs })
}

/// Every run of `paths`, read on `threads` threads, in (start time, path) order.
pub fn read_all(paths: &[PathBuf], settings: &Settings, threads: usize) -> Result<Vec<RunResult>> {
    let tables = Tables::default();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<RunResult>)>> = Mutex::new(Vec::with_capacity(paths.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, paths.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(path) = paths.get(i) else { break };
                let result = one(path, settings, &tables);
                let failed = result.is_err();
                results.lock().unwrap().push((i, result));
                if failed {
                    // The first error is reported; the other workers stop taking runs.
                    next.store(paths.len(), std::sync::atomic::Ordering::Relaxed);
                    break;
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let mut runs = Vec::with_capacity(results.len());
    for (i, result) in results {
        runs.push(result.with_context(|| format!("comparing {}", paths[i].display()))?);
    }
    runs.sort_by(|x, y| (x.info.started_at_us, &x.info.path).cmp(&(y.info.started_at_us, &y.info.path)));
    Ok(runs)
}

/// Nearest-rank p50 (rank ceil(n/2)) of `values`, as the metrics compute it.
pub fn p50(values: &[f64]) -> Option<f64> {
    inferbench_stats::percentile::Samples::new(values.iter().copied()).upper(50)
}

/// One (workflow, provider, metric)'s values across run dates.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    pub workflow: String,
    pub provider: String,
    pub metric: Column,
    /// (start µs, value), in date order, runs without the figure left out.
    pub points: Vec<(i64, f64)>,
    /// Per point: whether its run is partial (its manifest says `incomplete`). Partial runs
    /// are kept in the trend, marked, since a run cut short still measured what it sent.
    pub partial: Vec<bool>,
    /// Per point: whether its run's providers were ib-sim's.
    pub simulated: Vec<bool>,
}

impl Trend {
    /// Least-squares slope of the value against the run date, per day; `None` under two dates.
    pub fn slope_per_day(&self) -> Option<f64> {
        let n = self.points.len() as f64;
        if self.points.len() < 2 {
            return None;
        }
        let days: Vec<f64> = self.points.iter().map(|(t, _)| (*t - self.points[0].0) as f64 / 86_400e6).collect();
        let mean_x = days.iter().sum::<f64>() / n;
        let mean_y = self.points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = days.iter().map(|x| (x - mean_x).powi(2)).sum();
        let sxy: f64 = days.iter().zip(&self.points).map(|(x, p)| (x - mean_x) * (p.1 - mean_y)).sum();
        (sxx > 0.0).then(|| sxy / sxx)
    }
}

pub fn trends(runs: &[RunResult]) -> Vec<Trend> {
    let mut by: BTreeMap<(String, String, usize), Trend> = BTreeMap::new();
    for run in runs {
        for row in &run.pooled {
            for (m, value) in row.metrics.iter().enumerate() {
                let trend = by.entry((run.info.workflow.clone(), row.provider.clone(), m)).or_insert_with(|| Trend {
                    workflow: run.info.workflow.clone(),
                    provider: row.provider.clone(),
                    metric: HEADLINE[m],
                    points: Vec::new(),
                    partial: Vec::new(),
                    simulated: Vec::new(),
                });
                if let Some(v) = value {
                    trend.points.push((run.info.started_at_us, *v));
                    trend.partial.push(run.info.status == crate::discover::RunStatus::Partial);
                    trend.simulated.push(run.info.simulated());
                }
            }
        }
    }
    by.into_values().collect()
}

impl Trend {
    pub fn partial_runs(&self) -> usize {
        self.partial.iter().filter(|p| **p).count()
    }
    pub fn simulated_runs(&self) -> usize {
        self.simulated.iter().filter(|p| **p).count()
    }
}

/// One pair of providers of a workflow across every run that has both.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeadToHead {
    pub workflow: String,
    pub provider_a: String,
    pub provider_b: String,
    pub runs_together: usize,
    pub a_ranked_above: usize,
    pub b_ranked_above: usize,
    /// Per paired metric (PAIRED order): runs where the interval favours a, b, neither, and the
    /// per-run estimates' p50, over the runs with enough paired rounds for a verdict; the runs
    /// with too few are counted apart and left out of the rest.
    pub a_faster: [usize; 2],
    pub b_faster: [usize; 2],
    pub inconclusive: [usize; 2],
    pub too_few: [usize; 2],
    pub estimates: [Vec<f64>; 2],
}

pub fn head_to_head(runs: &[RunResult]) -> Vec<HeadToHead> {
    let mut by: BTreeMap<(String, String, String), HeadToHead> = BTreeMap::new();
    for run in runs {
        let ranks: BTreeMap<&str, Option<i64>> = run.pooled.iter().map(|p| (p.provider.as_str(), p.rank)).collect();
        for pair in &run.pairs {
            let key = (run.info.workflow.clone(), pair.provider_a.clone(), pair.provider_b.clone());
            let h = by.entry(key).or_insert_with(|| HeadToHead {
                workflow: run.info.workflow.clone(),
                provider_a: pair.provider_a.clone(),
                provider_b: pair.provider_b.clone(),
                ..Default::default()
            });
            let m = PAIRED.iter().position(|(name, _)| *name == pair.metric).expect("a paired metric");
            if m == 0 {
                h.runs_together += 1;
                let rank = |p: &str| ranks.get(p).copied().flatten();
                match (rank(&pair.provider_a), rank(&pair.provider_b)) {
                    (Some(x), Some(y)) if x < y => h.a_ranked_above += 1,
                    (Some(x), Some(y)) if y < x => h.b_ranked_above += 1,
                    (Some(_), None) => h.a_ranked_above += 1,
                    (None, Some(_)) => h.b_ranked_above += 1,
                    _ => {}
                }
            }
            match pair.verdict() {
                "a_faster" => h.a_faster[m] += 1,
                "b_faster" => h.b_faster[m] += 1,
                "inconclusive" => h.inconclusive[m] += 1,
                TOO_FEW => h.too_few[m] += 1,
                _ => {}
            }
            if let Some(i) = pair.interval.filter(|_| pair.verdict() != TOO_FEW) {
                h.estimates[m].push(i.estimate);
            }
        }
    }
    by.into_values().collect()
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::bootstrap::Interval;

    pub fn run(name: &str, day: i64, ranks: &[(&str, Option<i64>, f64)], e2e: Option<(f64, f64, f64)>) -> RunResult {
        let pooled = ranks
            .iter()
            .map(|(p, rank, e2e_p50)| Pooled {
                provider: p.to_string(),
                rank: *rank,
                eligible: Some(rank.is_some()),
                submitted_count: Some(10),
                metrics: [Some(50.0), Some(*e2e_p50), Some(900.0), Some(40.0), Some(0.9), Some(0.01)],
            })
            .collect();
        let interval = e2e.map(|(estimate, low, high)| Interval {
            n: 10,
            estimate,
            low,
            high,
            share_below_zero: 0.5,
            share_above_zero: 0.5,
        });
        let pair = |metric| PairResult {
            provider_a: "a".into(),
            provider_b: "b".into(),
            metric,
            shared_rounds: 10,
            interval,
            min_pairs: crate::bootstrap::min_pairs(95),
        };
        RunResult {
            info: RunInfo {
                path: format!("runs/workflow=w/run={name}").into(),
                workflow: "w".into(),
                name: name.into(),
                started_at_us: day * 86_400_000_000,
                date_source: "manifest",
                endpoint_mode: Some("simulated".into()),
                imported: false,
                status: crate::discover::RunStatus::Complete,
                status_reasons: Vec::new(),
            },
            pooled_source: load::POOLED_TABLE,
            pooled,
            pairs: vec![pair(E2E_LATENCY), pair(TTFA)],
            response_rows: 20,
            load: None,
            drift: BTreeMap::new(),
            inputs: BTreeMap::new(),
        }
    }

    #[test]
    fn trends_follow_each_provider_across_dates_with_a_slope_per_day() {
        let runs = [
            run("r1", 0, &[("a", Some(1), 100.0), ("b", Some(2), 200.0)], None),
            run("r2", 2, &[("a", Some(2), 140.0), ("b", Some(1), 120.0)], None),
        ];
        let trends = trends(&runs);
        let a = trends.iter().find(|t| t.provider == "a" && t.metric == E2E_LATENCY.at(50)).unwrap();
        assert_eq!(a.points, [(0, 100.0), (2 * 86_400_000_000, 140.0)]);
        assert_eq!(a.slope_per_day(), Some(20.0));
        assert_eq!(trends.len(), 2 * HEADLINE.len());
    }

    #[test]
    fn a_trend_marks_the_points_of_partial_and_simulated_runs() {
        let mut runs = [
            run("r1", 0, &[("a", Some(1), 100.0)], None),
            run("r2", 1, &[("a", Some(1), 140.0)], None),
            run("r3", 2, &[("a", Some(1), 120.0)], None),
        ];
        runs[1].info.status = crate::discover::RunStatus::Partial;
        runs[2].info.endpoint_mode = Some("providers".into());
        let trends = trends(&runs);
        let a = trends.iter().find(|t| t.metric == E2E_LATENCY.at(50)).unwrap();
        assert_eq!(a.partial, [false, true, false]);
        assert_eq!(a.simulated, [true, true, false]);
        assert_eq!((a.partial_runs(), a.simulated_runs()), (1, 2));
    }

    #[test]
    fn head_to_head_counts_ranks_and_verdicts_over_runs() {
        let runs = [
            run("r1", 0, &[("a", Some(1), 100.0), ("b", Some(2), 200.0)], Some((-50.0, -80.0, -20.0))),
            run("r2", 1, &[("a", Some(2), 140.0), ("b", Some(1), 120.0)], Some((10.0, -5.0, 30.0))),
            run("r3", 2, &[("a", None, 140.0), ("b", Some(1), 120.0)], Some((40.0, 5.0, 60.0))),
        ];
        let h = head_to_head(&runs);
        assert_eq!(h.len(), 1);
        let h = &h[0];
        assert_eq!((h.runs_together, h.a_ranked_above, h.b_ranked_above), (3, 1, 2));
        assert_eq!((h.a_faster[0], h.b_faster[0], h.inconclusive[0]), (1, 1, 1));
        assert_eq!(p50(&h.estimates[0]), Some(10.0));
        let verdicts: Vec<&str> = runs.iter().map(|r| r.pairs[0].verdict()).collect();
        assert_eq!(verdicts, ["a_faster", "inconclusive", "b_faster"]);
    }

    #[test]
    fn a_pair_with_too_few_rounds_gets_no_verdict_and_stays_out_of_the_tally() {
        let mut runs = vec![
            run("r1", 0, &[("a", Some(1), 100.0), ("b", Some(2), 200.0)], Some((-50.0, -80.0, -20.0))),
            run("r2", 1, &[("a", Some(1), 100.0), ("b", Some(2), 200.0)], Some((-40.0, -60.0, -30.0))),
        ];
        // r2's pair has 3 paired rounds: its interval is at best [min, max], a 75 % interval.
        for pair in &mut runs[1].pairs {
            pair.shared_rounds = 3;
            pair.interval.as_mut().unwrap().n = 3;
        }
        assert_eq!(runs[1].pairs[0].verdict(), TOO_FEW);
        let mut five = runs[1].pairs[0].clone();
        five.interval.as_mut().unwrap().n = 5;
        assert_eq!(five.verdict(), TOO_FEW, "5 pairs: [min, max] covers the median 93.75 % of the time");
        five.interval.as_mut().unwrap().n = 6;
        assert_eq!(five.verdict(), "a_faster");
        let h = &head_to_head(&runs)[0];
        assert_eq!((h.a_faster[0], h.b_faster[0], h.inconclusive[0], h.too_few[0]), (1, 0, 0, 1));
        assert_eq!(h.estimates[0], [-50.0], "the too-few run's estimate is left out");
        assert_eq!(h.runs_together, 2);
    }
}
