//! The stage, in order: read the inputs and check that they belong together (`inputs`),
//! render the whole document in memory (`render`, and `html` for `report.html`), and only
//! then write `report.md` and `report.html` atomically.
use crate::args::Args;
use crate::{inputs, render};
use inferbench_contract::canonical::sha256_hex;
use inferbench_contract::manifest::FileEntry;
use inferbench_store::atomic;
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::RunDir;

pub fn run(args: Args) -> anyhow::Result<()> {
    let pipeline = Pipeline::open(&args.run, &args.spec)?;
    let run = pipeline.run.clone();
    let writer = run.lock_for_writing("ib-report")?;
    // Hashing every file of the run (the manifest's inventory, and the hashes the provenance
    // checks compare) is the largest single piece of work on a big run: it runs on its own
    // core while the other reads the log and the tables.
    let (inputs, text, html) = std::thread::scope(|scope| -> anyhow::Result<_> {
        let hashing = scope.spawn(|| inferbench_store::manifest::inventory(&run));
        let inventory = || match hashing.join() {
            Ok(files) => Ok(files?),
            Err(_) => Err(anyhow::anyhow!("hashing the run's files stopped unexpectedly")),
        };
        let inputs = inputs::load(pipeline, writer, inventory)?;
        let (metrics, comparisons) = crate::html::documents(&inputs)?;
        // The two documents are independent: report.html on one core, report.md on the other.
        let (text, html) = std::thread::scope(|inner| {
            let html = inner.spawn(|| crate::html::render(&inputs, &metrics, &comparisons));
            let text = render::render(&inputs);
            (text, html.join())
        });
        let html = html.map_err(|_| anyhow::anyhow!("rendering report.html stopped unexpectedly"))?;
        Ok((inputs, text, html))
    })?;
    let html_path = run.report_html();
    let mut manifest = crate::manifest::build(&run, &inputs, text.as_bytes())?;
    manifest.files.insert(
        RunDir::REPORT_HTML.to_string(),
        FileEntry { bytes: html.len() as u64, sha256: sha256_hex(html.as_bytes()) },
    );
    // The manifest inventories this report.md and report.html: all three are published together.
    let mut outputs = atomic::Group::new(run.root());
    outputs.add(&run.report_md(), text.as_bytes())?;
    outputs.add(&html_path, html.as_bytes())?;
    outputs.add(&run.manifest(), &atomic::json_bytes(&run.manifest(), &manifest)?)?;
    outputs.commit()?;
    eprintln!(
        "ib-report: wrote report.md, report.html ({} providers) and manifest.json (run {})",
        inputs.metrics.combined_provider_metrics.len(),
        manifest.status
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;
    use inferbench_cli::{exit_for, Exit};
    use inferbench_contract::canonical::file_sha256;
    use inferbench_contract::tables::{ResponseRow, ScheduleRow};
    use inferbench_store::parquet_io;
    use serde_json::Value;
    use std::collections::BTreeMap;
    use std::path::Path;

    /// A run directory holding the sample's metrics and comparisons, locked to the bundled
    /// spec, with the provenance chain intact. Providers a, b, c are renamed to bundled ones.
    fn write_run(dir: &Path) {
        let spec = inferbench_inputs::spec::Spec::load(&sample::bundled_spec_path()).unwrap();
        let mut lock = sample::lock();
        lock.inputs = BTreeMap::from([
            ("spec.yaml".to_string(), file_sha256(&sample::bundled_spec_path()).unwrap()),
            ("providers.yaml".to_string(), file_sha256(&spec.providers_path).unwrap()),
        ]);
        let table = inferbench_inputs::providers::ProviderTable::load(&spec.providers_path, &spec).unwrap();
        lock.providers = table.names();
        atomic::write_json(&dir.join("lock.json"), &lock).unwrap();
        let lock_hash = file_sha256(&dir.join("lock.json")).unwrap();
        let provenance = BTreeMap::from([("lock.json".to_string(), lock_hash.clone())]);
        parquet_io::write::<ScheduleRow>(&dir.join("schedule.parquet"), &[], &provenance).unwrap();
        parquet_io::write::<ResponseRow>(&dir.join("responses.parquet"), &[], &provenance).unwrap();
        let rename = |text: String| {
            text.replace("\"a\"", "\"together\"").replace("\"b\"", "\"baseten\"").replace("\"c\"", "\"nebius\"")
        };
        for name in ["metrics.json", "comparisons.json"] {
            let json = if name == "metrics.json" { sample::metrics() } else { sample::comparisons() };
            let mut v: Value = serde_json::from_str(&rename(json.to_string())).unwrap();
            v["provenance"]["inputs"] = serde_json::json!({"lock.json": lock_hash});
            atomic::write_json(&dir.join(name), &v).unwrap();
        }
    }

    #[test]
    fn a_report_is_written_reproducibly_with_labels() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path());
        let args = || Args { run: dir.path().into(), spec: sample::bundled_spec_path().into() };
        run(args()).unwrap();
        let first = std::fs::read(dir.path().join("report.md")).unwrap();
        run(args()).unwrap();
        assert_eq!(first, std::fs::read(dir.path().join("report.md")).unwrap());
        let text = String::from_utf8(first).unwrap();
        assert!(text.contains("| 1 | Baseten | 330.8 | 3,228.8 |"), "{text}");
        assert!(text.contains("| — | Nebius |"), "{text}");
        assert!(!text.contains(dir.path().to_str().unwrap()), "no machine paths");
    }

    #[test]
    fn stale_comparisons_are_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path());
        let path = dir.path().join("comparisons.json");
        let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        v["provenance"]["inputs"]["responses.parquet"] = Value::from("00");
        atomic::write_json(&path, &v).unwrap();
        let err = run(Args { run: dir.path().into(), spec: sample::bundled_spec_path().into() }).unwrap_err();
        assert_eq!(exit_for(&err), Exit::LockMismatch, "{err:#}");
        let text = format!("{err:#}");
        assert!(text.contains("comparisons.json: it was derived from responses.parquet sha256 00…"), "{text}");
        assert!(!dir.path().join("report.md").exists() && !dir.path().join("manifest.json").exists());
    }

    #[test]
    fn comparisons_of_another_run_are_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path());
        let path = dir.path().join("comparisons.json");
        let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        v["run_id"] = Value::from("run-other");
        atomic::write_json(&path, &v).unwrap();
        let err = run(Args { run: dir.path().into(), spec: sample::bundled_spec_path().into() }).unwrap_err();
        assert_eq!(exit_for(&err), Exit::BadInput, "{err:#}");
        assert!(format!("{err:#}").contains("comparisons.json: run_id: `run-other` is not this run's"), "{err:#}");
        assert!(!dir.path().join("report.md").exists());
    }

    #[test]
    fn a_missing_required_column_is_named() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path());
        let path = dir.path().join("metrics.json");
        let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let key = inferbench_contract::metrics::HTTP_5XX.value().key();
        v["combined_provider_metrics"][0].as_object_mut().unwrap().remove(&key);
        atomic::write_json(&path, &v).unwrap();
        let err = run(Args { run: dir.path().into(), spec: sample::bundled_spec_path().into() }).unwrap_err();
        assert!(
            format!("{err:#}")
                .contains(&format!("combined_provider_metrics (together / pooled, entry 9): {key}: missing")),
            "{err:#}"
        );
    }
}
