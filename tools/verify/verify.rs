//! The order of the checks, each on what the one before established:
//!
//! 1. the signature of `manifest.json` (when the run is signed, or a key is given): the
//!    manifest is the publisher's;
//! 2. every file against the manifest's sizes and SHA-256, and no file it does not list;
//! 3. the sealed log against `events/seal.json`: its chain, each compressed segment's hash and
//!    what it decompresses to, the events table it recorded;
//! 4. the provenance of every derived file against the hashes 2 and 3 established and the
//!    inputs `lock.json` binds;
//! 5. reconstruct → evaluate → aggregate → report again in a temporary directory, compared
//!    byte for byte.
//!
//! The first that does not hold ends the run with a [`Failure`] naming the file (exit 4).
//! Nothing is written into the run except by `--sign`, once every check holds.
use crate::args::Args;
use crate::failure::Failure;
use crate::{files, provenance, rederive, signature};
use anyhow::Context;
use inferbench_contract::canonical::hex;
use inferbench_contract::lock::Lock;
use inferbench_contract::manifest::Manifest;
use inferbench_contract::tables::ResponseRow;
use inferbench_store::run::RunDir;

pub fn run(args: &Args) -> anyhow::Result<()> {
    let run = RunDir::new(&args.run);
    if !run.manifest().is_file() {
        return Err(Failure::new(RunDir::MANIFEST, "the run has none: ib-report writes it, last of the stages").into());
    }
    let trusted = args.public_key.as_deref().map(signature::public_key).transpose()?;
    match signature::check(&run, trusted.as_ref())? {
        Some(key) => println!("{}: signed by {}, signature holds", RunDir::MANIFEST, hex(&key)),
        None => println!("{}: not signed", RunDir::MANIFEST),
    }
    let manifest: Manifest = inferbench_store::atomic::read_json(&run.manifest())
        .map_err(|e| Failure::new(RunDir::MANIFEST, e.to_string()))?;
    files::check_manifest(&run, &manifest)?;
    println!("{}: {} files, every size and SHA-256 holds", RunDir::MANIFEST, manifest.files.len());

    let seal = files::check_seal(&run)?;
    match &seal {
        Some(facts) if facts.chained => {
            println!("{}: {} sealed segments, chained, each as sealed", files::seal_name(), facts.segments)
        }
        Some(facts) => println!(
            "{}: {} sealed segments, each as sealed; unchained (sealed before the chain was recorded): their \
             order rests on the manifest and the provenance",
            files::seal_name(),
            facts.segments
        ),
        None => println!("events/: not sealed; its segments hold as the manifest lists them"),
    }

    let lock: Lock =
        inferbench_store::atomic::read_json(&run.lock()).map_err(|e| Failure::new(RunDir::LOCK, e.to_string()))?;
    let originals = seal.map(|s| s.originals).unwrap_or_default();
    let checked = provenance::check(&run, &manifest, &lock, &originals)?;
    println!("provenance: {checked} derived files, each derived from the run's files");

    if args.skip_rederive {
        println!("re-derivation: skipped (--skip-rederive)");
    } else if !manifest.files.contains_key(RunDir::EVENTS_TABLE) {
        return Err(Failure::new(RunDir::EVENTS_TABLE, "the run has none: its fetch never finished").into());
    } else {
        let rules = rules_of(&run)?;
        let stages = rederive::Stages { spec: &args.spec, dataset: args.dataset.as_deref(), rules: &rules };
        let compared = rederive::check(&run, &manifest, &stages)?;
        println!("re-derivation: {compared} files re-derived byte for byte ({rules} rules)");
    }

    if let Some(source) = &args.sign {
        let _writer = run.lock_for_writing("ib-verify")?;
        let key = signature::sign(&run, source)?;
        println!(
            "{}: signed by {} ({} and {})",
            RunDir::MANIFEST,
            hex(&key),
            RunDir::MANIFEST_SIG,
            RunDir::MANIFEST_PUB
        );
    }
    println!("verified: {}", run.root().display());
    Ok(())
}

/// The rules the run's responses were derived under (their provenance names them when they
/// are not inferbench's), so the re-derivation uses the same.
fn rules_of(run: &RunDir) -> anyhow::Result<String> {
    if !run.responses().exists() {
        return Ok("inferbench".into());
    }
    let inputs = inferbench_store::parquet_io::read_inputs::<ResponseRow>(&run.responses())
        .context("the rules the responses were derived under")?;
    Ok(inputs.get(inferbench_judge::rules::KEY).cloned().unwrap_or_else(|| "inferbench".into()))
}
