//! The search's loop: the probes already made are read (or resumed), then the rule chooses
//! the next rate until it stops; the record is rewritten after every probe.
use crate::args::Args;
use crate::probe::{ProbeRun, SearchSpec};
use crate::record;
use crate::rule::{self, Next};
use anyhow::{bail, Result};
use inferbench_contract::documents::Probe;

pub fn run(args: Args) -> Result<()> {
    let own = args.run.join("pipeline/spec.yaml");
    let given = args.spec.clone().unwrap_or_else(|| own.clone());
    std::fs::create_dir_all(&args.run)?;
    let search_spec = SearchSpec::load(&given)?.adopt(&args.run)?;
    let Some(search) = search_spec.spec.load.as_ref().and_then(|l| l.search) else {
        unreachable!("SearchSpec::load refuses a spec without a search")
    };
    let mut probes: Vec<Probe> = Vec::new();
    let stopped = loop {
        let probe = ProbeRun::at(&args.run, probes.len());
        let rate = match (args.rescore, probe.made_for()?) {
            (true, None) => break rescored_stop(&search, &probes),
            (true, Some(rate)) => rate,
            (false, _) => match rule::next(&search, &probes) {
                Next::Probe(rate) => rate,
                Next::Stop(why) => break why,
            },
        };
        probe.prepare(&search_spec, rate)?;
        let done = probe.dir.join("metrics.json").exists() && probe.dir.join("report.md").exists();
        if args.rescore || !done {
            probe.run(&args.probe_command, rate)?;
        }
        probes.push(probe.read(rate)?);
        record::write(&args.run, &own, &search, &probes, "the search is running")?;
    };
    if probes.is_empty() {
        bail!("{}: no probe to re-score", args.run.display());
    }
    record::write(&args.run, &own, &search, &probes, &stopped)?;
    eprintln!("ib-search: {stopped}; {}", record::summary(&search, &probes));
    Ok(())
}

/// Why a rescored search ends where its probes end: the rule may want more, if the rescore
/// changed a verdict.
fn rescored_stop(search: &inferbench_inputs::spec::CapacitySearch, probes: &[Probe]) -> String {
    match rule::next(search, probes) {
        Next::Stop(why) => why,
        Next::Probe(rate) => {
            format!("re-scored: the rule would now probe {rate} req/s next (run the search again to go on)")
        }
    }
}
