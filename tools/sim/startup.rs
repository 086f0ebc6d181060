//! What `ib-sim` does with its arguments: writes a fleet, or loads and checks every input
//! (profiles, time scale, spec, dataset, log, open-file limit) before anything is bound, so a
//! bad file never leaves a half-started server or a stale port file behind, and then serves.
//! Every refused input is the contract's bad input (exit code 3); an open-file limit too low
//! for the profiles' providers is the machine's (exit code 1).
use crate::args::{Args, Command};
use crate::{fleet, listen, log, profile, server};
use anyhow::Context;
use inferbench_cli::nofile;
use inferbench_contract::Error;
use inferbench_inputs::spec::Spec;
use inferbench_sim::dataset::Dataset;

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(Command::GenerateFleet { providers, out, spec, zero_latency, apis }) = args.command {
        return generate_fleet(fleet::Fleet { providers, out, spec: spec.path, zero_latency, apis });
    }
    let app = app(&args)?;
    listen::serve(app, args.addr, args.port_file.as_deref())
}

fn generate_fleet(fleet: fleet::Fleet) -> anyhow::Result<()> {
    fleet::generate(&fleet)?;
    println!("wrote a fleet of {} simulated providers to {}", fleet.providers, fleet.out.display());
    Ok(())
}

/// The server's state, from inputs that are all valid.
fn app(args: &Args) -> anyhow::Result<server::App> {
    let profiles_path = args.profiles.as_deref().ok_or_else(|| Error::bad("--profiles is required"))?;
    let profiles = profile::Profiles::load(profiles_path).map_err(Error::from)?;
    let time_scale = args.time_scale.unwrap_or(profiles.time_scale);
    if !(time_scale.is_finite() && time_scale >= 0.0) {
        return Err(Error::bad(format!("--time-scale: must be a finite number >= 0, got {time_scale}")).into());
    }
    let spec = Spec::load(&args.spec)?;
    let dataset_dir = args.dataset.as_deref().unwrap_or(&spec.dataset_source).to_path_buf();
    let dataset = Dataset::load(&dataset_dir, &spec)?;
    if !dataset.shadowed.is_empty() {
        eprintln!(
            "ib-sim: {} item(s) repeat an earlier item's user prompt and are answered as that item (first: {})",
            dataset.shadowed.len(),
            dataset.shadowed[0]
        );
    }
    let log = match &args.log {
        Some(path) => {
            Some(log::RequestLog::open(path.clone()).with_context(|| format!("{}: cannot open log", path.display()))?)
        }
        None => None,
    };
    // One connection per provider per client: a fleet needs more than the usual 1,024 files.
    // The machine's limit, not an input: a limit too low exits 1.
    nofile::ensure(profiles.providers.len() as u64)?;
    Ok(server::App::new(profiles, dataset, time_scale, args.seed, log))
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_cli::{self, exit_for, Exit};
    use std::path::Path;

    /// Every bad input is the contract's exit code 3, and nothing is bound or written.
    #[test]
    fn bad_inputs_map_to_exit_3_before_binding() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("url");
        let good_profiles = repo.join("tests/fixtures/e2e/sim-profiles.yaml");
        let bad_profiles = dir.path().join("p.yaml");
        std::fs::write(&bad_profiles, "providers: {x: {model: m}}\n").unwrap();
        let sample = repo.join("data/micro-single-task-sample");
        let args = |profiles: &Path, dataset: &Path, time_scale: Option<f64>| Args {
            command: None,
            profiles: Some(profiles.to_path_buf()),
            dataset: inferbench_cli::DatasetArg { path: Some(dataset.to_path_buf()) },
            spec: repo.join("pipelines/micro-single-task/spec.yaml").into(),
            addr: "127.0.0.1:0".parse().unwrap(),
            port_file: Some(port_file.clone()),
            log: None,
            time_scale,
            seed: 0,
        };
        let cases = [
            (args(&bad_profiles, &sample, None), "providers.x"),
            (args(&good_profiles, &sample, Some(f64::NAN)), "--time-scale"),
            (args(&good_profiles, &sample, Some(-1.0)), "--time-scale"),
            // Not a dataset: the contract's loader lists what is missing.
            (args(&good_profiles, dir.path(), None), "manifest.json"),
        ];
        for (a, want) in cases {
            let err = run(a).unwrap_err();
            assert_eq!(exit_for(&err), Exit::BadInput, "{err:#}");
            assert!(format!("{err:#}").contains(want), "{err:#}");
            assert!(!port_file.exists());
        }
        // A spec that is not there is bad input, as in every stage.
        let mut a = args(&good_profiles, &sample, None);
        a.spec = dir.path().join("missing.yaml").into();
        assert_eq!(exit_for(&run(a).unwrap_err()), Exit::BadInput);
    }

    /// A fleet's inputs are bad input; a fleet directory that cannot be made is no input's
    /// fault, and exits 1 with the cause kept.
    #[test]
    fn generate_fleet_keeps_the_cause_of_its_failure() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        let generate = |out: &Path, spec: &Path| {
            let command = Command::GenerateFleet {
                providers: 2,
                out: out.to_path_buf(),
                spec: spec.to_path_buf().into(),
                zero_latency: true,
                apis: Vec::new(),
            };
            let args = Args {
                command: Some(command),
                profiles: None,
                dataset: inferbench_cli::DatasetArg::default(),
                spec: spec.to_path_buf().into(),
                addr: "127.0.0.1:0".parse().unwrap(),
                port_file: None,
                log: None,
                time_scale: None,
                seed: 0,
            };
            run(args).unwrap_err()
        };
        let spec = repo.join("pipelines/micro-single-task/spec.yaml");
        let unwritable = generate(&file.join("fleet"), &spec);
        assert_eq!(exit_for(&unwritable), Exit::Failed, "{unwritable:#}");
        let missing = generate(&dir.path().join("fleet"), &dir.path().join("missing.yaml"));
        assert_eq!(exit_for(&missing), Exit::BadInput, "{missing:#}");
        assert!(format!("{missing:#}").contains("missing.yaml: cannot read"), "{missing:#}");
    }
}
