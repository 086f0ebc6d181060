//! `runs/` as a Hive-partitioned dataset: the notebook guide's DuckDB and polars queries run as
//! they are written on a real run's files, with `workflow` and `run` read from the paths; no
//! table has a column of either name.
use crate::compare::{quick_workspace, scored_run};
use crate::support::{files, Sim};
use inferbench_contract::tables::ResponseRow;
use inferbench_store::parquet_io;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::collections::BTreeMap;
use std::process::Command;

/// The notebook guide's query (`docs/guide/notebooks.md`), run by DuckDB from the workspace root.
const DUCKDB: &str = r#"
import duckdb, json, sys
rows = duckdb.sql("""
    SELECT workflow, run, provider, count(*) AS responses,
           count(e2e_latency_ms) AS with_e2e, median(ttfa_ms) AS ttfa_median_ms
    FROM read_parquet('runs/*/*/responses.parquet', hive_partitioning = true)
    GROUP BY ALL ORDER BY ALL
""").fetchall()
tables = {}
for table in sys.argv[1:]:
    rel = duckdb.sql(f"SELECT * FROM read_parquet('runs/*/*/{table}.parquet', hive_partitioning = true)")
    tables[table] = {"columns": rel.columns, "rows": len(rel.fetchall())}
print(json.dumps({"rows": rows, "tables": tables}))
"#;

/// The polars equivalent.
const POLARS: &str = r#"
import json, polars as pl
df = (pl.scan_parquet('runs/**/responses.parquet', hive_partitioning=True)
        .group_by('workflow', 'run', 'provider').agg(pl.len().alias('responses'))
        .sort('workflow', 'run', 'provider').collect())
print(json.dumps(df.rows()))
"#;

fn python(script: &str, args: &[&str], cwd: &std::path::Path, what: &str) -> serde_json::Value {
    let out = Command::new("python3").arg("-c").arg(script).args(args).current_dir(cwd).output().expect("python3");
    assert!(
        out.status.success(),
        "{what} failed (make test installs it: python3 -m pip install {what})\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn duckdb_and_polars_read_runs_as_a_hive_partitioned_dataset() {
    let ws = quick_workspace();
    let run = {
        let _beside_others = crate::support::shared_section();
        let sim = Sim::start(&ws);
        scored_run(&ws, &sim, "workflow=micro-single-task/run=run-20261201-120000", "2")
    };
    // No table of the run has a column named after a partition key.
    let tables: Vec<String> = files(&run)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet") && p.parent() == Some(run.as_path()))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(tables.contains(&"responses".to_string()) && tables.len() >= 5, "{tables:?}");
    for table in &tables {
        let file = std::fs::File::open(run.join(format!("{table}.parquet"))).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        for field in builder.schema().fields() {
            assert!(
                !["workflow", "run"].contains(&field.name().as_str()),
                "{table}.parquet has a `{}` column",
                field.name()
            );
        }
    }

    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    let mut expected: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for r in &responses {
        let e = expected.entry(r.provider.clone()).or_default();
        e.0 += 1;
        e.1 += i64::from(r.e2e_latency_ms.is_some());
    }
    let table_args: Vec<&str> = tables.iter().map(String::as_str).collect();
    let duck = python(DUCKDB, &table_args, ws.dir.path(), "duckdb");
    let rows = duck["rows"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len(), "one row per provider: {duck}");
    for (row, (provider, (count, with_e2e))) in rows.iter().zip(&expected) {
        assert_eq!(row[0], "micro-single-task", "workflow from the path");
        assert_eq!(row[1], "run-20261201-120000", "run from the path, as text");
        assert_eq!(row[2], provider.as_str());
        assert_eq!((row[3].as_i64(), row[4].as_i64()), (Some(*count), Some(*with_e2e)), "{provider}");
    }
    // Every table reads the same way, with the two partition columns added once.
    for table in &tables {
        let columns: Vec<&str> =
            duck["tables"][table]["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        assert_eq!(columns.iter().filter(|c| **c == "workflow" || **c == "run").count(), 2, "{table}: {columns:?}");
    }
    assert_eq!(duck["tables"]["responses"]["rows"].as_u64(), Some(responses.len() as u64));

    let polars = python(POLARS, &[], ws.dir.path(), "polars");
    let rows = polars.as_array().unwrap();
    assert_eq!(rows.len(), expected.len());
    for (row, (provider, (count, _))) in rows.iter().zip(&expected) {
        assert_eq!(
            (row[0].as_str(), row[1].as_str(), row[2].as_str()),
            (Some("micro-single-task"), Some("run-20261201-120000"), Some(provider.as_str()))
        );
        assert_eq!(row[3].as_i64(), Some(*count));
    }
}
