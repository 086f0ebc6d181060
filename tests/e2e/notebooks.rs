//! `notebooks/analyses.py`, the typical analyses, run as CI runs it: on a real simulated run in
//! the Hive layout, with polars, DuckDB and pandas. The script checks its answers itself (the
//! engines against each other and against the run's metrics) and fails on any disagreement.
use crate::compare::{quick_workspace, scored_run};
use crate::support::{repo, Sim};
use std::process::Command;

#[test]
fn the_notebook_analyses_run_on_a_simulated_run_with_polars_duckdb_and_pandas() {
    let ws = quick_workspace();
    {
        let _beside_others = crate::support::shared_section();
        let sim = Sim::start(&ws);
        scored_run(&ws, &sim, "workflow=micro-single-task/run=notebook", "2");
    }
    let out = Command::new("python3")
        .arg(repo().join("notebooks/analyses.py"))
        .arg(ws.path("runs"))
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "notebooks/analyses.py failed (make test installs polars, duckdb and pandas)\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for heading in [
        "TTFA per provider",
        "Inter-token gaps per provider",
        "Task success by provider and family",
        "Failures by class over time",
    ] {
        assert!(stdout.contains(heading), "the script printed `{heading}`:\n{stdout}");
    }
    assert!(stdout.contains("polars, DuckDB and pandas agree"), "{stdout}");
    // The notebook holds the script's cells.
    let check = Command::new("python3").arg(repo().join("notebooks/to_ipynb.py")).arg("--check").output().unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    // Every answering provider has a TTFA distribution (the limited one fails every request).
    for provider in ["steady", "Reasoner.AI", "impostor"] {
        assert!(stdout.contains(provider), "{provider} in:\n{stdout}");
    }
}
