//! One run's tables, read with polars lazy scans of only the columns the comparison needs:
//! the pooled metrics (`pooled.parquet`, or the `pooled` rows of `metrics.parquet` in runs
//! scored before it existed) and, from `responses.parquet`, each request's provider, round
//! and latencies.
use anyhow::{Context, Result};
use inferbench_contract::metrics::{self, Metric, E2E_LATENCY, FAILURE, OUTPUT_TOKENS_PER_SECOND, TASK_SUCCESS, TTFA};
use inferbench_contract::Error;
use inferbench_store::run::RunDir;
use polars::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The headline metrics: pooled-row columns of the metric catalogue, which gives each its key,
/// heading, unit and direction.
pub const HEADLINE: [metrics::Column; 6] = [
    TTFA.at(50),
    E2E_LATENCY.at(50),
    E2E_LATENCY.at(99),
    OUTPUT_TOKENS_PER_SECOND.at(50),
    TASK_SUCCESS.value(),
    FAILURE.value(),
];

/// One provider's pooled row.
#[derive(Debug, Clone, PartialEq)]
pub struct Pooled {
    pub provider: String,
    pub rank: Option<i64>,
    pub eligible: Option<bool>,
    pub submitted_count: Option<i64>,
    /// In [`HEADLINE`] order.
    pub metrics: [Option<f64>; 6],
}

impl Pooled {
    /// The value of a headline column; `None` for a null or a column not in the headline.
    pub fn value(&self, column: metrics::Column) -> Option<f64> {
        HEADLINE.iter().position(|c| *c == column).and_then(|m| self.metrics[m])
    }
}

/// Where the pooled rows came from.
pub const POOLED_TABLE: &str = RunDir::POOLED;
pub const LEGACY_POOLED: &str = "metrics.parquet (task_family = pooled)";

fn scan(path: &Path) -> Result<LazyFrame> {
    let text = path.to_str().ok_or_else(|| Error::bad(format!("{}: the path is not UTF-8", path.display())))?;
    let args = ScanArgsParquet {
        // The directories above a run are partitions (`workflow=…/run=…`); this scan reads
        // one file, and its own columns only.
        hive_options: HiveOptions { enabled: Some(false), ..Default::default() },
        ..Default::default()
    };
    LazyFrame::scan_parquet(PlRefPath::new(text), args).map_err(|e| bad_table(path, e))
}

/// Checks that the file scanned by `lf` has every column of `names`, so that a missing one is
/// named in one line with its file (a query over it would fail with the whole query plan).
fn require(path: &Path, lf: &mut LazyFrame, names: &[&str]) -> Result<()> {
    let schema = lf.collect_schema().map_err(|e| bad_table(path, e))?;
    match names.iter().find(|n| !schema.contains(n)) {
        Some(missing) => Err(Error::bad(format!("{}: no column `{missing}`", path.display())).into()),
        None => Ok(()),
    }
}

fn bad_table(path: &Path, e: PolarsError) -> anyhow::Error {
    Error::bad(format!("{}: {e}", path.display())).into()
}

/// The run's pooled rows, sorted by provider, and which table they came from.
pub fn pooled(run: &Path) -> Result<(Vec<Pooled>, &'static str)> {
    let table = RunDir::new(run).pooled_parquet();
    let (path, mut lf, source) = if table.is_file() {
        (table.clone(), scan(&table)?.with_row_index(FILE_ROW, None), POOLED_TABLE)
    } else {
        let metrics = RunDir::new(run).metrics_parquet();
        if !metrics.is_file() {
            return Err(Error::bad(format!(
                "{}: neither pooled.parquet nor metrics.parquet; the run is not aggregated (make rescore RUN={})",
                run.display(),
                run.display()
            ))
            .into());
        }
        // The row index is taken before the filter, so that it is the row in the file.
        let mut lf = scan(&metrics)?;
        require(&metrics, &mut lf, &["task_family"])?;
        let lf = lf.with_row_index(FILE_ROW, None).filter(col("task_family").cast(DataType::String).eq(lit("pooled")));
        (metrics, lf, LEGACY_POOLED)
    };
    let headline: Vec<String> = HEADLINE.iter().map(|m| m.key()).collect();
    let mut needed = vec!["provider", "rank", "eligible", "submitted_count"];
    needed.extend(headline.iter().map(String::as_str));
    require(&path, &mut lf, &needed)?;
    let mut columns = vec![
        col(FILE_ROW).cast(DataType::Int64),
        col("provider").cast(DataType::String),
        col("rank").cast(DataType::Int64),
        col("eligible").cast(DataType::Boolean),
        col("submitted_count").cast(DataType::Int64),
    ];
    columns.extend(HEADLINE.iter().map(|m| col(m.key()).cast(DataType::Float64)));
    let df = lf.select(columns).sort(["provider"], Default::default()).collect().map_err(|e| bad_table(&path, e))?;
    let get = |name: &str| df.column(name).map_err(|e| bad_table(&path, e));
    let provider = get("provider")?.str()?.clone();
    let rank = get("rank")?.i64()?.clone();
    let eligible = get("eligible")?.bool()?.clone();
    let submitted = get("submitted_count")?.i64()?.clone();
    let metrics: Vec<Float64Chunked> =
        HEADLINE.iter().map(|m| Ok(get(&m.key())?.f64()?.clone())).collect::<Result<_>>()?;
    let mut rows = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let name = provider
            .get(i)
            .ok_or_else(|| {
                let row = df.column(FILE_ROW).ok().and_then(|c| c.i64().ok()?.get(i)).unwrap_or_default();
                Error::bad(format!("{}: row {row} (counting from 0): provider: null", path.display()))
            })?
            .to_string();
        if rows.last().is_some_and(|r: &Pooled| r.provider == name) {
            return Err(Error::bad(format!("{}: provider `{name}` has two pooled rows", path.display())).into());
        }
        rows.push(Pooled {
            provider: name,
            rank: rank.get(i),
            eligible: eligible.get(i),
            submitted_count: submitted.get(i),
            metrics: std::array::from_fn(|m| metrics[m].get(i)),
        });
    }
    Ok((rows, source))
}

/// One provider's samples in one run, by round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// Ascending round indices, one per response.
    pub rounds: Vec<i64>,
    pub e2e_ms: Vec<Option<f64>>,
    pub ttfa_ms: Vec<Option<f64>>,
}

/// A percentile metric's column in `responses.parquet`: its summary key in the catalogue.
pub fn sample_column(metric: &Metric) -> &'static str {
    metric.summary.unwrap_or(metric.name)
}

/// The column that carries a row's position in its file through a sort (no table of a run
/// has a column of this name).
const FILE_ROW: &str = "__ib_compare_file_row";

/// The rounds of the run's prompt-cache probe (`schedule.parquet`'s `cache_probe` set): its
/// requests count in no figure of the run's own (README "Definitions", prompt caches), so in
/// none here. Empty for a schedule without the column (written before it existed) or without
/// a schedule (an imported run's always has one).
fn probe_rounds(run: &Path) -> Result<BTreeSet<i64>> {
    let path = RunDir::new(run).schedule();
    if !path.is_file() {
        return Ok(BTreeSet::new());
    }
    let mut lf = scan(&path)?;
    let schema = lf.collect_schema().map_err(|e| bad_table(&path, e))?;
    if !schema.contains("cache_probe") {
        return Ok(BTreeSet::new());
    }
    let df = lf
        .filter(col("cache_probe").is_not_null())
        .select([col("round_index").cast(DataType::Int64)])
        .collect()
        .map_err(|e| bad_table(&path, e))?;
    let rounds = df.column("round_index").map_err(|e| bad_table(&path, e))?.i64()?.clone();
    Ok(rounds.iter().flatten().collect())
}

/// The run's responses, per provider (by name), the prompt-cache probe's left out.
pub fn responses(run: &Path) -> Result<BTreeMap<String, Samples>> {
    let probe = probe_rounds(run)?;
    let path = RunDir::new(run).responses();
    let (e2e_column, ttfa_column) = (sample_column(E2E_LATENCY), sample_column(TTFA));
    // Each row keeps its place in the file, so that a bad row is named where a reader of the
    // file finds it, not where the sort below put it.
    let mut lf = scan(&path)?;
    require(&path, &mut lf, &["provider", "round_index", e2e_column, ttfa_column])?;
    let df = lf
        .with_row_index(FILE_ROW, None)
        .select([
            col(FILE_ROW).cast(DataType::Int64),
            col("provider").cast(DataType::String),
            col("round_index").cast(DataType::Int64),
            col(e2e_column).cast(DataType::Float64),
            col(ttfa_column).cast(DataType::Float64),
        ])
        .sort(["provider", "round_index"], Default::default())
        .collect()
        .map_err(|e| bad_table(&path, e))?;
    let get = |name: &str| df.column(name).map_err(|e| bad_table(&path, e));
    let provider = get("provider")?.str()?.clone();
    let round = get("round_index")?.i64()?.clone();
    let e2e = get(e2e_column)?.f64()?.clone();
    let ttfa = get(ttfa_column)?.f64()?.clone();
    let file_row = get(FILE_ROW)?.i64()?.clone();
    // Sorted by provider, so each provider's rows are one stretch.
    let mut out: Vec<(String, Samples)> = Vec::new();
    for (i, ((p, r), (e, t))) in provider.iter().zip(round.iter()).zip(e2e.iter().zip(ttfa.iter())).enumerate() {
        let at = || format!("{}: row {} (counting from 0)", path.display(), file_row.get(i).unwrap_or_default());
        let p = p.ok_or_else(|| Error::bad(format!("{}: provider: null", at())))?;
        let r = r.ok_or_else(|| Error::bad(format!("{}: round_index: null", at())))?;
        if probe.contains(&r) {
            continue;
        }
        for (name, v) in [(e2e_column, e), (ttfa_column, t)] {
            if v.is_some_and(|v| !v.is_finite()) {
                return Err(Error::bad(format!("{}: {name}: {} is not a finite latency", at(), v.unwrap())).into());
            }
        }
        if out.last().is_none_or(|(last, _)| last != p) {
            out.push((p.to_string(), Samples::default()));
        }
        let samples = &mut out.last_mut().expect("pushed above").1;
        if samples.rounds.last() == Some(&r) {
            return Err(Error::bad(format!(
                "{}: provider `{p}` has two responses in round {r}; responses.parquet holds one per request",
                path.display()
            ))
            .into());
        }
        samples.rounds.push(r);
        samples.e2e_ms.push(e);
        samples.ttfa_ms.push(t);
    }
    Ok(out.into_iter().collect())
}

/// The paired metrics' samples.
pub fn e2e(s: &Samples) -> &[Option<f64>] {
    &s.e2e_ms
}
pub fn ttfa(s: &Samples) -> &[Option<f64>] {
    &s.ttfa_ms
}

/// The paired differences `a − b` of one metric over the rounds where both have a sample,
/// and the number of rounds both have a response in.
pub fn paired(a: &Samples, b: &Samples, pick: fn(&Samples) -> &[Option<f64>]) -> (Vec<f64>, usize) {
    let (va, vb) = (pick(a), pick(b));
    let (mut i, mut j) = (0, 0);
    let mut shared = 0;
    let mut out = Vec::new();
    while i < a.rounds.len() && j < b.rounds.len() {
        match a.rounds[i].cmp(&b.rounds[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                if let (Some(x), Some(y)) = (va[i], vb[j]) {
                    out.push(x - y);
                }
                i += 1;
                j += 1;
            }
        }
    }
    (out, shared)
}

/// Reads both tables, naming the run in any error.
pub fn run_tables(run: &Path) -> Result<(Vec<Pooled>, &'static str, BTreeMap<String, Samples>)> {
    let (pooled, source) = pooled(run).with_context(|| format!("reading {}", run.display()))?;
    let responses = responses(run).with_context(|| format!("reading {}", run.display()))?;
    Ok((pooled, source, responses))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(rows: &[(i64, Option<f64>)]) -> Samples {
        Samples {
            rounds: rows.iter().map(|r| r.0).collect(),
            e2e_ms: rows.iter().map(|r| r.1).collect(),
            ttfa_ms: rows.iter().map(|r| r.1.map(|v| v / 2.0)).collect(),
        }
    }

    #[test]
    fn pairs_are_the_rounds_where_both_have_a_sample() {
        let a = samples(&[(0, Some(100.0)), (1, Some(150.0)), (2, None), (4, Some(90.0))]);
        let b = samples(&[(0, Some(120.0)), (1, Some(150.0)), (2, Some(80.0)), (3, Some(1.0))]);
        let (d, shared) = paired(&a, &b, e2e);
        assert_eq!((d, shared), (vec![-20.0, 0.0], 3));
        let (d, _) = paired(&a, &b, ttfa);
        assert_eq!(d, vec![-10.0, 0.0]);
    }

    fn write(path: &Path, df: &mut DataFrame) {
        let file = std::fs::File::create(path).unwrap();
        ParquetWriter::new(file).finish(df).unwrap();
    }

    #[test]
    fn responses_are_grouped_by_provider_in_round_order_and_a_repeated_round_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut df = df!(
            "provider" => ["b", "a", "a", "b"],
            "round_index" => [1i64, 1, 0, 0],
            sample_column(E2E_LATENCY) => [Some(5.0), None, Some(3.0), Some(4.0)],
            sample_column(TTFA) => [Some(1.0), None, Some(2.0), None],
            "answer" => ["x", "y", "z", "w"],
        )
        .unwrap();
        write(&dir.path().join("responses.parquet"), &mut df);
        let got = responses(dir.path()).unwrap();
        assert_eq!(got["a"].rounds, [0, 1]);
        assert_eq!(got["a"].e2e_ms, [Some(3.0), None]);
        assert_eq!(got["b"].ttfa_ms, [None, Some(1.0)]);
        let (e2e, ttfa) = (sample_column(E2E_LATENCY), sample_column(TTFA));
        let mut twice =
            df!("provider" => ["a", "a"], "round_index" => [0i64, 0], e2e => [1.0, 2.0], ttfa => [1.0, 1.0]).unwrap();
        write(&dir.path().join("responses.parquet"), &mut twice);
        let err = responses(dir.path()).unwrap_err();
        assert!(err.to_string().contains("two responses in round 0"), "{err}");
        let mut no_ttfa = df!("provider" => ["a"], "round_index" => [0i64], e2e => [1.0]).unwrap();
        write(&dir.path().join("responses.parquet"), &mut no_ttfa);
        let err = responses(dir.path()).unwrap_err();
        let path = dir.path().join("responses.parquet");
        assert_eq!(err.to_string(), format!("{}: no column `{ttfa}`", path.display()), "one line, no query plan");
        assert_eq!(inferbench_cli::exit_for(&err), inferbench_cli::Exit::BadInput);
    }

    #[test]
    fn the_prompt_cache_probes_rounds_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let (e2e, ttfa) = (sample_column(E2E_LATENCY), sample_column(TTFA));
        let mut df = df!(
            "provider" => ["a", "a", "a"],
            "round_index" => [0i64, 1, 2],
            e2e => [1.0, 2.0, 3.0],
            ttfa => [1.0, 1.0, 1.0],
        )
        .unwrap();
        write(&dir.path().join("responses.parquet"), &mut df);
        let mut schedule = df!(
            "round_index" => [0i64, 1, 2],
            "cache_probe" => [None, Some("first"), Some("repeat")],
        )
        .unwrap();
        write(&dir.path().join("schedule.parquet"), &mut schedule);
        let got = responses(dir.path()).unwrap();
        assert_eq!((got["a"].rounds.as_slice(), got["a"].e2e_ms.as_slice()), (&[0i64][..], &[Some(1.0)][..]));
        let mut before = df!("round_index" => [0i64, 1, 2]).unwrap();
        write(&dir.path().join("schedule.parquet"), &mut before);
        assert_eq!(responses(dir.path()).unwrap()["a"].rounds, [0, 1, 2], "a schedule without the column");
    }

    #[test]
    fn a_bad_row_is_named_by_its_row_in_the_file_not_its_place_after_sorting() {
        let dir = tempfile::tempdir().unwrap();
        let (e2e, ttfa) = (sample_column(E2E_LATENCY), sample_column(TTFA));
        // Sorted by provider and round, file row 3 (z's NaN) comes last, at position 5; file
        // row 1 (a's null provider) would come first.
        let mut df = df!(
            "provider" => ["b", "a", "a", "z", "b", "a"],
            "round_index" => [1i64, 1, 0, 0, 0, 2],
            e2e => [5.0, 1.0, 3.0, f64::NAN, 4.0, 2.0],
            ttfa => [1.0, 1.0, 2.0, 1.0, 1.0, 1.0],
        )
        .unwrap();
        write(&dir.path().join("responses.parquet"), &mut df);
        let err = responses(dir.path()).unwrap_err().to_string();
        assert!(err.contains("row 3 (counting from 0)") && err.contains("NaN"), "{err}");
        let mut null = df!(
            "provider" => [Some("b"), Some("a"), None],
            "round_index" => [0i64, 0, 0],
            e2e => [1.0, 1.0, 1.0],
            ttfa => [1.0, 1.0, 1.0],
        )
        .unwrap();
        write(&dir.path().join("responses.parquet"), &mut null);
        let err = responses(dir.path()).unwrap_err().to_string();
        assert!(err.contains("row 2 (counting from 0): provider: null"), "{err}");
    }

    #[test]
    fn pooled_rows_come_from_pooled_parquet_or_from_the_legacy_metrics_rows() {
        let dir = tempfile::tempdir().unwrap();
        let table = |providers: &[&str], families: Option<&[&str]>| {
            let n = providers.len();
            let mut cols = vec![Column::new("provider".into(), providers.to_vec())];
            if let Some(families) = families {
                cols.push(Column::new("task_family".into(), families.to_vec()));
            }
            cols.push(Column::new("rank".into(), (0..n).map(|i| Some(i as i64 + 1)).collect::<Vec<_>>()));
            cols.push(Column::new("eligible".into(), vec![true; n]));
            cols.push(Column::new("submitted_count".into(), vec![10i64; n]));
            for (k, m) in HEADLINE.iter().enumerate() {
                cols.push(Column::new(m.key().into(), (0..n).map(|i| (k * 10 + i) as f64).collect::<Vec<_>>()));
            }
            DataFrame::new_infer_height(cols).unwrap()
        };
        let mut legacy = table(&["p1", "p1", "p0", "p0"], Some(&["a", "pooled", "a", "pooled"]));
        write(&dir.path().join("metrics.parquet"), &mut legacy);
        let (rows, source) = pooled(dir.path()).unwrap();
        assert_eq!(source, LEGACY_POOLED);
        let got: Vec<(&str, Option<i64>, Option<f64>)> =
            rows.iter().map(|r| (r.provider.as_str(), r.rank, r.metrics[1])).collect();
        assert_eq!(got, [("p0", Some(4), Some(13.0)), ("p1", Some(2), Some(11.0))]);
        // pooled.parquet, when present, is the one read.
        let mut fresh = table(&["p1", "p0"], None);
        write(&dir.path().join("pooled.parquet"), &mut fresh);
        let (rows, source) = pooled(dir.path()).unwrap();
        assert_eq!(source, POOLED_TABLE);
        assert_eq!(
            rows.iter().map(|r| (r.provider.as_str(), r.rank)).collect::<Vec<_>>(),
            [("p0", Some(2)), ("p1", Some(1))]
        );
        assert_eq!(rows[0].metrics[5], Some(51.0));
        let mut missing = table(&["p0"], None).drop("rank").unwrap();
        write(&dir.path().join("pooled.parquet"), &mut missing);
        let err = pooled(dir.path()).unwrap_err();
        let path = dir.path().join("pooled.parquet");
        assert_eq!(err.to_string(), format!("{}: no column `rank`", path.display()), "one line, no query plan");
        assert_eq!(inferbench_cli::exit_for(&err), inferbench_cli::Exit::BadInput);
    }
}
