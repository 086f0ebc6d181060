//! Each provider's drift figures in one run, read from its tables: task success, agreement
//! with the other providers' majority answer, visible-answer lengths and usage ratios (the
//! metrics are described in `drift.rs`).
use anyhow::Result;
use inferbench_contract::vocab::{Classification, TaskFamily};
use inferbench_contract::Error;
use inferbench_store::run::RunDir;
use polars::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One provider's drift figures in one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// (valid results, scored responses); `None` without `evaluations.parquet`.
    pub success: Option<(u64, u64)>,
    /// (agreeing, compared); `None` without parsed answers.
    pub agreement: Option<(u64, u64)>,
    /// Visible-answer tokens of each complete response.
    pub answer_tokens: Vec<f64>,
    /// usage.completion_tokens / local count of each complete response that reports usage.
    pub usage_ratios: Vec<f64>,
}

/// The strict majority of `answers`: the one value more than half of them hold.
fn majority<'a>(answers: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut n = 0;
    for a in answers {
        *counts.entry(a).or_default() += 1;
        n += 1;
    }
    counts.into_iter().find(|(_, c)| 2 * c > n).map(|(a, _)| a)
}

/// One response as the figures need it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub provider: String,
    /// (family, item id): the item the response answers.
    pub item: (String, String),
    pub scored: bool,
    pub complete: bool,
    pub visible_answer_tokens: i64,
    pub reasoning_tokens: i64,
    pub usage_completion_tokens: Option<i64>,
    /// Whether it is a valid result; `None` without an evaluation.
    pub valid: Option<bool>,
    /// The parsed answer, as a key equal for equal answers; `None` when it did not parse.
    pub answer: Option<String>,
}

/// The figures of each provider of one run's rows. `evaluated`: whether the run has
/// evaluations (else no success or agreement figure).
pub fn figures(rows: &[Row], evaluated: bool) -> BTreeMap<String, Figures> {
    let mut out: BTreeMap<String, Figures> = BTreeMap::new();
    let mut by_item: HashMap<&(String, String), Vec<(&str, &str)>> = HashMap::new();
    for r in rows {
        if let Some(answer) = &r.answer {
            by_item.entry(&r.item).or_default().push((r.provider.as_str(), answer.as_str()));
        }
    }
    for r in rows {
        let f = out.entry(r.provider.clone()).or_default();
        if evaluated {
            let s = f.success.get_or_insert((0, 0));
            if r.scored {
                s.1 += 1;
                s.0 += u64::from(r.valid == Some(true));
            }
            let a = f.agreement.get_or_insert((0, 0));
            if let Some(answer) = &r.answer {
                let others = by_item[&r.item].iter().filter(|(p, _)| *p != r.provider).map(|(_, a)| *a);
                if let Some(m) = majority(others) {
                    a.1 += 1;
                    a.0 += u64::from(m == answer);
                }
            }
        }
        if r.complete {
            f.answer_tokens.push(r.visible_answer_tokens as f64);
            let local = r.visible_answer_tokens + r.reasoning_tokens;
            if let Some(usage) = r.usage_completion_tokens.filter(|_| local > 0) {
                f.usage_ratios.push(usage as f64 / local as f64);
            }
        }
    }
    for f in out.values_mut() {
        // A provider with no scored response, or no item to compare, has no such figure.
        f.success = f.success.filter(|s| s.1 > 0);
        f.agreement = f.agreement.filter(|a| a.1 > 0);
    }
    out
}

fn scan(path: &Path) -> Result<LazyFrame> {
    let text = path.to_str().ok_or_else(|| Error::bad(format!("{}: the path is not UTF-8", path.display())))?;
    let args = ScanArgsParquet {
        hive_options: HiveOptions { enabled: Some(false), ..Default::default() },
        ..Default::default()
    };
    LazyFrame::scan_parquet(PlRefPath::new(text), args).map_err(|e| bad(path, e))
}

fn bad(path: &Path, e: PolarsError) -> anyhow::Error {
    Error::bad(format!("{}: {e}", path.display())).into()
}

fn require(path: &Path, lf: &mut LazyFrame, names: &[&str]) -> Result<Schema> {
    let schema = lf.collect_schema().map_err(|e| bad(path, e))?;
    match names.iter().find(|n| !schema.contains(n)) {
        Some(missing) => Err(Error::bad(format!("{}: no column `{missing}`", path.display())).into()),
        None => Ok((*schema).clone()),
    }
}

/// Every leaf of a (possibly nested) struct series, in field order.
fn leaves(series: &Series, out: &mut Vec<Series>) -> PolarsResult<()> {
    if let DataType::Struct(_) = series.dtype() {
        for field in series.struct_()?.fields_as_series() {
            leaves(&field, out)?;
        }
    } else {
        out.push(series.cast(&DataType::String)?);
    }
    Ok(())
}

/// The parsed answers of `parsed_output` as keys: the leaf values joined by a unit
/// separator, nulls as `∅`; `None` when every leaf is null (the answer did not parse).
fn answer_keys(series: &Series) -> PolarsResult<Vec<Option<String>>> {
    let mut all = Vec::new();
    leaves(series, &mut all)?;
    let texts: Vec<&StringChunked> = all.iter().map(|s| s.str()).collect::<PolarsResult<_>>()?;
    Ok((0..series.len())
        .map(|i| {
            let values: Vec<Option<&str>> = texts.iter().map(|t| t.get(i)).collect();
            values
                .iter()
                .any(Option::is_some)
                .then(|| values.iter().map(|v| v.unwrap_or("∅")).collect::<Vec<_>>().join("\u{1f}"))
        })
        .collect())
}

/// The run's rows, from `responses.parquet` and (when the run has it) `evaluations.parquet`;
/// and whether the responses could be matched with evaluations. Only `provider` is
/// required: a table written before a column existed gives no figure that needs it (no
/// `item_id`: no agreement; no `complete`: no lengths or usage; no `usage_completion_tokens`:
/// no usage; no `request_id`, or evaluations without `classification`: no success or
/// agreement), so that runs of any age stay comparable.
pub fn read_rows(run: &Path) -> Result<(Vec<Row>, bool)> {
    let dir = RunDir::new(run);
    let path = dir.responses();
    let mut lf = scan(&path)?;
    let schema = require(&path, &mut lf, &["provider"])?;
    let optional = |name: &str, dtype: DataType| {
        if schema.contains(name) {
            col(name).cast(dtype)
        } else {
            lit(NULL).cast(dtype).alias(name)
        }
    };
    let df = lf
        .select([
            optional("request_id", DataType::String),
            col("provider").cast(DataType::String),
            optional("task_family", DataType::String),
            optional("item_id", DataType::String),
            optional("complete", DataType::Boolean),
            optional("visible_answer_tokens", DataType::Int64),
            optional("reasoning_tokens", DataType::Int64),
            optional("usage_completion_tokens", DataType::Int64),
        ])
        .collect()
        .map_err(|e| bad(&path, e))?;
    let get = |name: &str| df.column(name).map_err(|e| bad(&path, e));
    let (request, provider, family, item) =
        (get("request_id")?.str()?, get("provider")?.str()?, get("task_family")?.str()?, get("item_id")?.str()?);
    let complete = get("complete")?.bool()?;
    let (visible, reasoning, usage) =
        (get("visible_answer_tokens")?.i64()?, get("reasoning_tokens")?.i64()?, get("usage_completion_tokens")?.i64()?);

    let evaluations = dir.evaluations();
    let mut judged: HashMap<String, (bool, Option<String>)> = HashMap::new();
    let mut evaluated = false;
    if evaluations.is_file() && schema.contains("request_id") {
        let mut lf = scan(&evaluations)?;
        let columns = lf.collect_schema().map_err(|e| bad(&evaluations, e))?;
        evaluated = columns.contains("request_id") && columns.contains("classification");
        let parsed = columns.contains("parsed_output");
        let mut select = vec![col("request_id").cast(DataType::String), col("classification").cast(DataType::String)];
        if parsed {
            select.push(col("parsed_output"));
        }
        if evaluated {
            let ev = lf.select(select).collect().map_err(|e| bad(&evaluations, e))?;
            let ids = ev.column("request_id").map_err(|e| bad(&evaluations, e))?.str()?.clone();
            let class = ev.column("classification").map_err(|e| bad(&evaluations, e))?.str()?.clone();
            let keys = match ev.column("parsed_output") {
                Ok(c) if parsed => answer_keys(c.as_materialized_series()).map_err(|e| bad(&evaluations, e))?,
                _ => vec![None; ev.height()],
            };
            for (i, key) in keys.into_iter().enumerate() {
                let Some(id) = ids.get(i) else { continue };
                let valid = class.get(i) == Some(Classification::ValidResult.as_str());
                judged.insert(id.to_string(), (valid, key));
            }
        }
    }

    let mut rows = Vec::with_capacity(df.height());
    for i in 0..df.height() {
        let Some(p) = provider.get(i) else {
            return Err(Error::bad(format!("{}: row {i} (counting from 0): provider: null", path.display())).into());
        };
        // Without its item a response is compared with no other (no agreement figure).
        let (f, it) = (family.get(i), item.get(i));
        let judgement = request.get(i).and_then(|id| judged.get(id));
        rows.push(Row {
            provider: p.to_string(),
            item: (f.unwrap_or_default().to_string(), it.unwrap_or_default().to_string()),
            scored: f != Some(TaskFamily::Synthetic.as_str()),
            complete: complete.get(i).unwrap_or(false),
            visible_answer_tokens: visible.get(i).unwrap_or(0),
            reasoning_tokens: reasoning.get(i).unwrap_or(0),
            usage_completion_tokens: usage.get(i),
            valid: judgement.map(|j| j.0),
            answer: judgement.and_then(|j| j.1.clone()).filter(|_| it.is_some()),
        });
    }
    Ok((rows, evaluated))
}

/// The run's figures per provider.
pub fn read(run: &Path) -> Result<BTreeMap<String, Figures>> {
    let (rows, evaluated) = read_rows(run)?;
    Ok(figures(&rows, evaluated))
}
