//! `ib-compare` over real small runs in the Hive layout (`runs/workflow=…/run=…/`): its
//! outputs' structure, and every paired interval recomputed by an independent naive bootstrap
//! from `responses.parquet` and the method the output records.
use crate::support::{bin, ok, Sim, Workspace};
use arrow_array::{
    Array, BooleanArray, Float64Array, Int64Array, LargeStringArray, StringArray, StringViewArray, UInt64Array,
};
use inferbench_contract::tables::ResponseRow;
use inferbench_store::parquet_io;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `ib-compare`, beside the other binaries of this build: `make test` builds it first, with
/// every other target the tests need, in `cargo build --workspace --bins --tests …` (cargo
/// builds a package's binaries only for that package's own integration tests). Not built from
/// here: cargo holds the target directory's lock while the tests run.
pub fn ib_compare() -> PathBuf {
    let path = bin("ib-select").with_file_name("ib-compare");
    assert!(
        path.is_file(),
        "{} is missing: build it with `cargo build{} -p inferbench-compare` (`make test` builds it before the tests)",
        path.display(),
        if cfg!(debug_assertions) { "" } else { " --release" }
    );
    path
}

/// The test providers that answer (or fail) at once: no timeout to wait for.
const PROVIDERS: [&str; 4] = ["steady", "Reasoner.AI", "impostor", "limited"];

pub fn quick_workspace() -> Workspace {
    let table = std::fs::read_to_string(crate::support::repo().join("tests/fixtures/e2e/providers.yaml")).unwrap();
    let (head, blocks) = table.split_once("\n  - name: ").unwrap();
    let kept: Vec<String> = format!("  - name: {blocks}")
        .split("\n  - name: ")
        .map(|b| b.trim_start_matches("  - name: ").to_string())
        .filter(|b| PROVIDERS.iter().any(|p| b.starts_with(&format!("{p}\n"))))
        .collect();
    assert_eq!(kept.len(), PROVIDERS.len(), "the fixture table names {PROVIDERS:?}");
    let table = format!("{head}\n  - name: {}\n", kept.join("\n  - name: ").trim_end());
    Workspace::with_table(&table, "sim-profiles.yaml", |spec| spec)
}

/// A fetched and scored run of `ws` at `runs/<rel>`.
pub fn scored_run(ws: &Workspace, sim: &Sim, rel: &str, per_family: &str) -> PathBuf {
    let run = ws.run(rel);
    ok(ws.stage("ib-select", &run).args(["--per-family", per_family, "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    ok(ws
        .stage("ib-fetch", &run)
        .args(["--endpoint-base", &sim.url, "--deadline-seconds", "5", "--env-file", "/nonexistent"])
        .arg("--send-credentials-to-simulator")
        .envs(crate::pipeline::SECRETS));
    ws.derive(&run);
    run
}

/// A Parquet file's columns by name, as text, numbers or flags (whichever the column holds).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Text(Vec<Option<String>>),
    Number(Vec<Option<f64>>),
    Integer(Vec<Option<i64>>),
    Unsigned(Vec<Option<u64>>),
    Flag(Vec<Option<bool>>),
    Other,
}

pub fn table(path: &Path) -> (BTreeMap<String, Values>, BTreeMap<String, String>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
    let metadata: BTreeMap<String, String> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .filter_map(|kv| Some((kv.key.clone(), kv.value.clone()?)))
        .collect();
    let mut out: BTreeMap<String, Values> = BTreeMap::new();
    for batch in builder.build().unwrap() {
        let batch = batch.unwrap();
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            let any = column.as_any();
            let values = if let Some(a) = any.downcast_ref::<StringArray>() {
                Values::Text(a.iter().map(|v| v.map(str::to_string)).collect())
            } else if let Some(a) = any.downcast_ref::<LargeStringArray>() {
                Values::Text(a.iter().map(|v| v.map(str::to_string)).collect())
            } else if let Some(a) = any.downcast_ref::<StringViewArray>() {
                Values::Text(a.iter().map(|v| v.map(str::to_string)).collect())
            } else if let Some(a) = any.downcast_ref::<Float64Array>() {
                Values::Number(a.iter().collect())
            } else if let Some(a) = any.downcast_ref::<Int64Array>() {
                Values::Integer(a.iter().collect())
            } else if let Some(a) = any.downcast_ref::<UInt64Array>() {
                Values::Unsigned(a.iter().collect())
            } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
                Values::Flag(a.iter().collect())
            } else {
                Values::Other
            };
            let entry = out.entry(field.name().clone()).or_insert_with(|| match &values {
                Values::Text(_) => Values::Text(vec![]),
                Values::Number(_) => Values::Number(vec![]),
                Values::Integer(_) => Values::Integer(vec![]),
                Values::Unsigned(_) => Values::Unsigned(vec![]),
                Values::Flag(_) => Values::Flag(vec![]),
                Values::Other => Values::Other,
            });
            match (entry, values) {
                (Values::Text(a), Values::Text(b)) => a.extend(b),
                (Values::Number(a), Values::Number(b)) => a.extend(b),
                (Values::Integer(a), Values::Integer(b)) => a.extend(b),
                (Values::Unsigned(a), Values::Unsigned(b)) => a.extend(b),
                (Values::Flag(a), Values::Flag(b)) => a.extend(b),
                _ => {}
            }
        }
    }
    (out, metadata)
}

pub fn text(t: &BTreeMap<String, Values>, name: &str) -> Vec<String> {
    match &t[name] {
        Values::Text(v) => v.iter().map(|s| s.clone().unwrap()).collect(),
        other => panic!("{name} is not text: {other:?}"),
    }
}

pub fn numbers(t: &BTreeMap<String, Values>, name: &str) -> Vec<Option<f64>> {
    match &t[name] {
        Values::Number(v) => v.clone(),
        other => panic!("{name} is not a float column: {other:?}"),
    }
}

pub fn integers(t: &BTreeMap<String, Values>, name: &str) -> Vec<Option<i64>> {
    match &t[name] {
        Values::Integer(v) => v.clone(),
        other => panic!("{name} is not an integer column: {other:?}"),
    }
}

pub fn flags(t: &BTreeMap<String, Values>, name: &str) -> Vec<bool> {
    match &t[name] {
        Values::Flag(v) => v.iter().map(|f| f.unwrap()).collect(),
        other => panic!("{name} is not a boolean column: {other:?}"),
    }
}

/// SplitMix64, written again from the method ib-compare records (not its code).
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
}

/// Upper-tail nearest-rank p50 of `values`.
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len().div_ceil(2) - 1]
}

/// The naive paired bootstrap: every resample built from its drawn indices, sorted, its
/// median taken; the interval from the sorted medians at the bound ranks.
fn naive_interval(differences: &[f64], seed: u64, resamples: usize, confidence: u64) -> (f64, f64, f64) {
    let n = differences.len();
    let mut sorted = differences.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut rng = SplitMix(seed ^ (n as u64).wrapping_mul(0xD1B54A32D192ED03));
    let mut medians: Vec<f64> = (0..resamples)
        .map(|_| {
            let resample: Vec<f64> =
                (0..n).map(|_| sorted[((u128::from(rng.next()) * n as u128) >> 64) as usize]).collect();
            median(&resample)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    let b = resamples as u64;
    let low = ((100 - confidence) * b).div_ceil(200) as usize;
    let high = ((100 + confidence) * b).div_ceil(200) as usize;
    (median(differences), medians[low - 1], medians[high - 1])
}

#[test]
fn ib_compare_over_hive_partitioned_runs_matches_a_naive_bootstrap() {
    let compare = ib_compare();
    let ws = quick_workspace();
    let runs: Vec<PathBuf> = {
        let sim = Sim::start(&ws);
        ["a", "b"]
            .iter()
            .map(|name| scored_run(&ws, &sim, &format!("workflow=micro-single-task/run={name}"), "3"))
            .collect()
    };
    // A directory the glob matches that is not a scored run is skipped, not an error.
    std::fs::create_dir_all(ws.path("runs/workflow=micro-single-task/run=unscored")).unwrap();
    // Nor is a run reconstructed but not aggregated yet (responses, no metrics).
    let unaggregated = ws.path("runs/workflow=micro-single-task/run=unaggregated");
    std::fs::create_dir_all(&unaggregated).unwrap();
    std::fs::copy(runs[0].join("responses.parquet"), unaggregated.join("responses.parquet")).unwrap();
    let out = ws.path("comparison");
    let (seed, resamples, confidence) = (7u64, 1000usize, 90u64);
    let output = ok(Command::new(&compare)
        .arg("runs/*/*")
        .args(["--out", "comparison", "--seed", "7", "--resamples", "1000", "--confidence", "90"])
        .current_dir(ws.dir.path()));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("skipping runs/workflow=micro-single-task/run=unscored"), "{stderr}");
    assert!(stderr.contains("skipping runs/workflow=micro-single-task/run=unaggregated"), "{stderr}");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("`runs/workflow=micro-single-task/run=unaggregated` (responses.parquet but no pooled.parquet or metrics.parquet: not aggregated yet"), "{md}");
    for file in [
        "runs.parquet",
        "leaderboard.parquet",
        "trends.parquet",
        "head_to_head.parquet",
        "paired_bootstrap.parquet",
        "load_steps.parquet",
        "summary.md",
        "summary.html",
    ] {
        assert!(out.join(file).is_file(), "{file} is written");
    }
    // Closed-loop runs have no steps: the table is there, with its columns and no row.
    let steps =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(out.join("load_steps.parquet")).unwrap()).unwrap();
    assert_eq!(steps.metadata().file_metadata().num_rows(), 0);
    for column in ["provider", "offered_rate", "knee", "client_bound_reasons"] {
        assert!(steps.schema().field_with_name(column).is_ok(), "load_steps.parquet has `{column}`");
    }

    // runs.parquet: both runs, named by their partitions, dated from their manifests.
    let (runs_table, _) = table(&out.join("runs.parquet"));
    let mut names = text(&runs_table, "run_name");
    names.sort();
    assert_eq!(names, ["a", "b"]);
    assert!(text(&runs_table, "run_workflow").iter().all(|w| w == "micro-single-task"));
    assert!(text(&runs_table, "started_at_source").iter().all(|s| s == "manifest"));
    // Both ran to the end, against ib-sim: complete, and marked simulated in the summary.
    assert!(text(&runs_table, "run_status").iter().all(|s| s == "complete"));
    assert!(text(&runs_table, "endpoint_mode").iter().all(|s| s == "simulated"));

    // The leaderboard: one row per run and provider, ranks as the run's pooled rows say.
    let (board, _) = table(&out.join("leaderboard.parquet"));
    assert_eq!(text(&board, "provider").len(), runs.len() * PROVIDERS.len());
    for metric in [
        "ttfa_p50",
        "e2e_latency_p50",
        "e2e_latency_p99",
        "output_tokens_per_second_p50",
        "task_success_rate",
        "failure_rate",
    ] {
        assert_eq!(numbers(&board, metric).len(), runs.len() * PROVIDERS.len(), "{metric}");
    }
    let steady_rows: Vec<usize> =
        text(&board, "provider").iter().enumerate().filter(|(_, p)| *p == "steady").map(|(i, _)| i).collect();
    assert_eq!(steady_rows.len(), 2);
    assert!(steady_rows.iter().all(|&i| integers(&board, "rank")[i].is_some()), "steady is ranked");

    // Every interval, recomputed naively from the run's own responses.
    let (paired, metadata) = table(&out.join("paired_bootstrap.parquet"));
    let method: serde_json::Value = serde_json::from_str(&metadata["inferbench.bootstrap"]).unwrap();
    assert_eq!((method["seed"].as_u64(), method["resamples"].as_u64()), (Some(seed), Some(resamples as u64)));
    assert_eq!(method["confidence_percent"].as_u64(), Some(confidence));
    let paths = text(&paired, "run_path");
    let (a_side, b_side, metric) = (text(&paired, "provider_a"), text(&paired, "provider_b"), text(&paired, "metric"));
    let (estimate, low, high) =
        (numbers(&paired, "difference_p50_ms"), numbers(&paired, "ci_low_ms"), numbers(&paired, "ci_high_ms"));
    let verdicts = text(&paired, "verdict");
    let pairs_per_run = PROVIDERS.len() * (PROVIDERS.len() - 1) / 2;
    assert_eq!(paths.len(), runs.len() * pairs_per_run * 2, "every pair, E2E and TTFA");
    let mut checked = 0;
    let mut compared_with_aggregate = 0;
    for run in &runs {
        let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
        let comparisons: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.join("comparisons.json")).unwrap()).unwrap();
        let rel = run.strip_prefix(ws.dir.path()).unwrap().display().to_string();
        let rows: Vec<usize> = (0..paths.len()).filter(|&i| paths[i] == rel).collect();
        assert_eq!(rows.len(), pairs_per_run * 2, "{rel}'s pairs");
        for i in rows {
            assert!(a_side[i] < b_side[i], "A < B by name");
            let sample = |r: &ResponseRow| if metric[i] == "e2e_latency_ms" { r.e2e_latency_ms } else { r.ttfa_ms };
            let by_round = |p: &str| -> BTreeMap<i64, Option<f64>> {
                responses.iter().filter(|r| r.provider == p).map(|r| (r.round_index, sample(r))).collect()
            };
            let (a, b) = (by_round(&a_side[i]), by_round(&b_side[i]));
            let differences: Vec<f64> = a.iter().filter_map(|(round, x)| Some((*x)? - (*b.get(round)?)?)).collect();
            if differences.is_empty() {
                assert_eq!((estimate[i], low[i], high[i], verdicts[i].as_str()), (None, None, None, "no_pairs"));
                continue;
            }
            let (e, l, h) = naive_interval(&differences, seed, resamples, confidence);
            assert_eq!(
                (estimate[i], low[i], high[i]),
                (Some(e), Some(l), Some(h)),
                "{rel} {} {} {}",
                a_side[i],
                b_side[i],
                metric[i]
            );
            // No verdict where [min, max] of the differences (the widest a bootstrap interval
            // gets) covers the median less often than the confidence: 1 − 2·0.5ⁿ < c.
            let too_few = 1.0 - 2.0 * 0.5f64.powi(differences.len() as i32) < confidence as f64 / 100.0;
            let verdict = if too_few {
                "too_few_rounds"
            } else if h < 0.0 {
                "a_faster"
            } else if l > 0.0 {
                "b_faster"
            } else {
                "inconclusive"
            };
            assert_eq!(verdicts[i], verdict);
            checked += 1;
            if metric[i] == "e2e_latency_ms" {
                let pair = comparisons["pairwise_e2e_latency_differences"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["provider_a"] == a_side[i].as_str() && p["provider_b"] == b_side[i].as_str())
                    .expect("comparisons.json has the pair");
                if pair["eligible_comparison"] == true {
                    // The same f64, but read back from JSON by serde_json's default float
                    // parser, which may land one ulp away from the written number.
                    let p50 = pair["difference_p50_ms"].as_f64().expect("an eligible pair has a p50");
                    assert!(
                        p50.to_bits().abs_diff(e.to_bits()) <= 1,
                        "the estimate {e} is comparisons.json's p50 {p50}"
                    );
                    compared_with_aggregate += 1;
                }
            }
        }
    }
    assert!(checked >= 2 * 3 * 2, "the answering providers' pairs have intervals ({checked})");
    assert!(compared_with_aggregate >= 2, "estimates were compared with comparisons.json ({compared_with_aggregate})");

    // Provider against provider: every pair of the workflow, counted over both runs; a pair's
    // run with too few paired rounds for a verdict is counted apart, never as a verdict.
    let (h2h, _) = table(&out.join("head_to_head.parquet"));
    for (name, short) in [("e2e_latency_ms", "e2e_latency"), ("ttfa_ms", "ttfa")] {
        let too_few_rows = (0..paths.len()).filter(|&i| metric[i] == name && verdicts[i] == "too_few_rounds").count();
        let counted: i64 = integers(&h2h, &format!("{short}_too_few_rounds_runs")).iter().map(|n| n.unwrap()).sum();
        assert_eq!(counted as usize, too_few_rows, "{name}");
        let decided: i64 = ["a_faster", "b_faster", "inconclusive"]
            .iter()
            .flat_map(|v| integers(&h2h, &format!("{short}_{v}_runs")))
            .map(|n| n.unwrap())
            .sum();
        let decided_rows = (0..paths.len())
            .filter(|&i| metric[i] == name && ["a_faster", "b_faster", "inconclusive"].contains(&verdicts[i].as_str()))
            .count();
        assert_eq!(decided as usize, decided_rows, "{name}: the tally holds only the verdicts");
    }
    let pairs: BTreeSet<(String, String)> =
        text(&h2h, "provider_a").into_iter().zip(text(&h2h, "provider_b")).collect();
    assert_eq!(pairs.len(), pairs_per_run);
    assert!(integers(&h2h, "runs_together").iter().all(|n| *n == Some(2)));

    // Trends: one row per provider and headline metric.
    let (trends, _) = table(&out.join("trends.parquet"));
    assert_eq!(text(&trends, "metric").len(), PROVIDERS.len() * 6);

    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for heading in [
        "# Comparison of 2 runs",
        "Leaderboard over time",
        "Trend: TTFA p50",
        "Provider against provider",
        "Paired intervals of the newest run",
    ] {
        assert!(md.contains(heading), "summary.md has `{heading}`:\n{md}");
    }
    assert!(md.contains("seed 7") && md.contains("1000 bootstrap resamples"), "the method is in the summary");
    assert!(md.contains("each run ranking them by E2E p99 (lowest first)"), "the rank key is named");
    assert!(md.contains("| complete, simulated |"), "each run's status:\n{md}");
    if verdicts.iter().any(|v| v == "too_few_rounds") {
        assert!(md.contains("too few"), "{md}");
    }
    let html = std::fs::read_to_string(out.join("summary.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("Leaderboard over time"));
    assert!(!html.contains("src=") && !html.contains("href="), "the page fetches nothing");

    // The same runs and seed give the same bytes.
    let before = std::fs::read(out.join("paired_bootstrap.parquet")).unwrap();
    ok(Command::new(&compare)
        .arg("runs/*/*")
        .args(["--out", "comparison", "--seed", "7", "--resamples", "1000", "--confidence", "90"])
        .current_dir(ws.dir.path()));
    assert!(std::fs::read(out.join("paired_bootstrap.parquet")).unwrap() == before, "deterministic");

    // A named directory that is not a run is bad input (exit 3), and nothing is written there.
    let refused = Command::new(&compare)
        .args(["runs/workflow=micro-single-task/run=unscored", "--out", "refused"])
        .current_dir(ws.dir.path())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(3), "{}", String::from_utf8_lossy(&refused.stderr));
    assert!(!ws.path("refused").exists());

    // A partial run of the same benchmark in the older layout (`<workflow>/<name>`), its
    // manifest naming another workflow: labelled from its path, it meets run a in the trends,
    // marked partial.
    let partial = copy_run(&runs[1], &ws.path("older/micro-single-task/partial"));
    let manifest_path = partial.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["status"] = "incomplete".into();
    manifest["status_reasons"] = serde_json::json!(["1 scheduled request has no response"]);
    manifest["workflow"] = "seed-spec".into();
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    ok(Command::new(&compare)
        .args(["runs/workflow=micro-single-task/run=a", "older/micro-single-task/partial", "--out", "mixed"])
        .current_dir(ws.dir.path()));
    let (mixed, _) = table(&ws.path("mixed/runs.parquet"));
    assert_eq!(text(&mixed, "run_workflow"), ["micro-single-task", "micro-single-task"]);
    let mut status = text(&mixed, "run_status");
    status.sort();
    assert_eq!(status, ["complete", "partial"]);
    let (trends, _) = table(&ws.path("mixed/trends.parquet"));
    // (A provider without the figure in either run has a trend of no point.)
    let (counts, partials) = (integers(&trends, "run_count"), integers(&trends, "partial_run_count"));
    assert!(counts.contains(&Some(2)), "one benchmark, one trend: {counts:?}");
    for (n, partial) in counts.iter().zip(&partials) {
        assert!(*n == Some(0) || (*n == Some(2) && *partial == Some(1)), "{counts:?} {partials:?}");
    }
    let md = std::fs::read_to_string(ws.path("mixed/summary.md")).unwrap();
    assert!(md.contains("| partial, simulated |") && md.contains("(1 partial, 2 simulated)"), "{md}");

    // A bad row is named by its row in the file; a missing column in one line.
    let nan = copy_run(&runs[0], &ws.path("bad/nan"));
    let mut responses = parquet_io::read::<ResponseRow>(&nan.join("responses.parquet")).unwrap();
    let bad_row = 5;
    responses.rows[bad_row].e2e_latency_ms = Some(f64::NAN);
    parquet_io::write(&nan.join("responses.parquet"), &responses.rows, &responses.inputs).unwrap();
    let refused =
        Command::new(&compare).args(["bad/nan", "--out", "refused"]).current_dir(ws.dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("row {bad_row} (counting from 0): e2e_latency_ms: NaN")), "{stderr}");
    let no_ttfa = copy_run(&runs[0], &ws.path("bad/no-ttfa"));
    let file = no_ttfa.join("responses.parquet");
    let reader =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap()).unwrap().build().unwrap();
    let batches: Vec<arrow_array::RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let keep: Vec<usize> =
        (0..batches[0].num_columns()).filter(|&i| batches[0].schema().field(i).name() != "ttfa_ms").collect();
    let schema = std::sync::Arc::new(batches[0].schema().project(&keep).unwrap());
    let mut writer = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&file).unwrap(), schema, None).unwrap();
    for batch in &batches {
        writer.write(&batch.project(&keep).unwrap()).unwrap();
    }
    writer.close().unwrap();
    let refused =
        Command::new(&compare).args(["bad/no-ttfa", "--out", "refused"]).current_dir(ws.dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("bad/no-ttfa/responses.parquet: no column `ttfa_ms`"), "{stderr}");
    assert!(stderr.lines().count() <= 4, "a few lines, no query plan:\n{stderr}");
}

/// The files ib-compare reads of `run`, copied to `to`.
fn copy_run(run: &Path, to: &Path) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    for file in ["responses.parquet", "pooled.parquet", "metrics.parquet", "metrics.json", "manifest.json", "lock.json"]
    {
        if run.join(file).is_file() {
            std::fs::copy(run.join(file), to.join(file)).unwrap();
        }
    }
    to.to_path_buf()
}
