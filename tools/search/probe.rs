//! One probe: a one-step load run at one rate, in `probes/<NN>/` of the search's directory,
//! with a pipeline of its own (the search's spec with `load.rates: [rate]` in place of
//! `load.search`, and copies of the provider table and prompt templates it names), run to its
//! report by the probe command, and read back from its `metrics.json`.
use anyhow::{bail, Context, Result};
use inferbench_contract::documents::{MetricsDocument, Probe, ProbeVerdict, Verdict, SEND_LAG_REASON};
use inferbench_inputs::spec::Spec;
use serde_json::{json, Value};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// The search's spec, read once: checked, and as the tree its probes' specs are made from.
pub struct SearchSpec {
    pub spec: Spec,
    root: Value,
    /// The files the spec names, relative to its directory, copied into every probe's pipeline.
    named: Vec<String>,
}

impl SearchSpec {
    pub fn load(path: &Path) -> Result<SearchSpec> {
        let spec = Spec::load(path)?;
        if spec.load.as_ref().and_then(|l| l.search).is_none() {
            bail!("{}: has no load.search section; a load spec with rates runs with `make run SPEC=…`", path.display());
        }
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let root: Value =
            serde_norway::from_str(&text).with_context(|| format!("{}: not valid YAML", path.display()))?;
        let mut named: Vec<String> = spec.families.iter().map(|f| f.prompt_template.clone()).collect();
        if let Some(table) = spec.provider_table_file() {
            let relative = table.strip_prefix(spec.dir()).unwrap_or(table);
            named.push(relative.to_string_lossy().into_owned());
        }
        for name in &named {
            let inside = Path::new(name).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            if !inside {
                bail!("{}: names {name}, outside its directory; a search copies the files its spec names into every probe, so they must be inside it", path.display());
            }
        }
        named.sort();
        named.dedup();
        Ok(SearchSpec { spec, root, named })
    }

    /// The search's own directory's copy of the spec (`DIR/pipeline/spec.yaml`), made from
    /// this one unless it is that copy: a search directory holds everything its probes were
    /// made from. A copy that differs from this spec is refused (exit 4).
    pub fn adopt(self, dir: &Path) -> Result<SearchSpec> {
        let own = dir.join("pipeline/spec.yaml");
        let same_file = own.canonicalize().ok().zip(self.spec.path.canonicalize().ok()).is_some_and(|(a, b)| a == b);
        if same_file {
            return Ok(self);
        }
        let bytes = std::fs::read(&self.spec.path).with_context(|| format!("reading {}", self.spec.path.display()))?;
        match std::fs::read(&own) {
            Ok(there) if there == bytes => {}
            Ok(_) => {
                return Err(inferbench_contract::Error::LockMismatch(format!(
                    "{}: the search in {} began from another spec ({}); start a new search directory",
                    self.spec.path.display(),
                    dir.display(),
                    own.display()
                ))
                .into())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.copy_named(own.parent().unwrap_or(dir))?;
                inferbench_store::atomic::write(&own, &bytes)?;
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", own.display())),
        }
        SearchSpec::load(&own)
    }

    /// Copies the files the spec names into `pipeline`, at the same relative paths.
    fn copy_named(&self, pipeline: &Path) -> Result<()> {
        for name in &self.named {
            let (from, to) = (self.spec.dir().join(name), pipeline.join(name));
            std::fs::create_dir_all(to.parent().unwrap_or(pipeline))?;
            std::fs::copy(&from, &to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
        }
        Ok(())
    }

    /// The probe's spec: the search's, with `load.rates: [rate]` in place of `load.search`.
    fn probe_spec(&self, rate: f64) -> Value {
        let mut root = self.root.clone();
        if let Some(load) = root.get_mut("load").and_then(Value::as_object_mut) {
            load.remove("search");
            load.insert("rates".into(), json!([rate]));
            let described = format!("a capacity search's probe at {rate} requests per second per provider");
            load.insert("description".into(), json!(described));
        }
        root
    }
}

/// A probe's directory and its spec, relative to the search's directory.
pub struct ProbeRun {
    pub name: String,
    pub dir: PathBuf,
    pub spec: PathBuf,
}

impl ProbeRun {
    pub fn at(search_dir: &Path, index: usize) -> ProbeRun {
        let name = format!("probes/{:02}", index + 1);
        let dir = search_dir.join(&name);
        let spec = dir.join("pipeline/spec.yaml");
        ProbeRun { name, dir, spec }
    }

    /// The rate a probe already made was made for (its spec's one rate), if it was made.
    pub fn made_for(&self) -> Result<Option<f64>> {
        if !self.spec.exists() {
            return Ok(None);
        }
        let spec = Spec::load(&self.spec)?;
        match spec.load.as_ref().map(|l| l.steps.as_slice()) {
            Some([inferbench_inputs::spec::StepTarget::Rate(rate)]) => Ok(Some(*rate)),
            _ => bail!("{}: is not a probe's spec (one step at one rate)", self.spec.display()),
        }
    }

    /// Writes the probe's pipeline, unless it is there: the named files first, the spec last,
    /// so a pipeline without its spec is an unfinished one and is written again.
    pub fn prepare(&self, search: &SearchSpec, rate: f64) -> Result<()> {
        match self.made_for()? {
            Some(made) if made == rate => return Ok(()),
            Some(made) => bail!(
                "{} was made for {made} req/s, but the search now asks {rate}: its spec or its probes' \
                 results changed since; start the search in a new directory",
                self.name
            ),
            None => {}
        }
        search.copy_named(self.spec.parent().unwrap_or(&self.dir))?;
        let header = format!(
            "# A capacity search's probe, written by ib-search from {}: its load.search gives way to\n\
             # one rate. The search's record is search.json, two directories up.\n",
            search.spec.path.display()
        );
        let text = header + &serde_norway::to_string(&search.probe_spec(rate))?;
        inferbench_store::atomic::write(&self.spec, text.as_bytes())?;
        Ok(())
    }

    /// Runs `command` (a shell command line) for the probe, with `IB_PROBE_RUN` and
    /// `IB_PROBE_SPEC` set to its directory and spec.
    pub fn run(&self, command: &str, rate: f64) -> Result<()> {
        eprintln!("ib-search: {} at {rate} req/s", self.name);
        let status = Command::new("bash")
            .args(["-c", command])
            .env("IB_PROBE_RUN", &self.dir)
            .env("IB_PROBE_SPEC", &self.spec)
            .status()
            .context("starting the probe command")?;
        if !status.success() {
            bail!(
                "the probe at {rate} req/s ({}) failed ({status}); what it wrote is kept, and the same command resumes it",
                self.dir.display()
            );
        }
        Ok(())
    }

    /// The probe's verdicts, from its `metrics.json`.
    pub fn read(&self, rate: f64) -> Result<Probe> {
        let path = self.dir.join("metrics.json");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let doc: MetricsDocument =
            serde_json::from_str(&text).with_context(|| format!("{}: not a metrics document", path.display()))?;
        let Some(load) = doc.load else { bail!("{}: has no load section", path.display()) };
        let target = load.objectives.goodput_target;
        let lag_only = |reasons: &[String]| reasons.iter().all(|r| r.starts_with(SEND_LAG_REASON));
        let mut providers: Vec<ProbeVerdict> = load
            .steps
            .iter()
            .map(|s| ProbeVerdict {
                provider: s.provider.clone(),
                verdict: match (s.client_bound.is_empty(), s.goodput) {
                    // Bound by its lag alone, the provider was offered the whole rate. Its
                    // latencies are from the intended sends, which the lag only lengthened:
                    // a step that held, held anyway; one that fails without the lag fails
                    // because of its provider.
                    (false, Some(_)) if lag_only(&s.client_bound) && s.holds => Verdict::Holds,
                    (false, Some(_)) if lag_only(&s.client_bound) && s.goodput_without_lag < Some(target) => {
                        Verdict::Fails
                    }
                    (false, _) => Verdict::ClientBound,
                    (true, None) => Verdict::Unmeasured,
                    (true, Some(_)) if s.holds => Verdict::Holds,
                    (true, Some(_)) => Verdict::Fails,
                },
                goodput: s.goodput,
                achieved_rate: s.achieved_rate,
                completed_per_second: s.completed_per_second,
                ttft_p99_ms: s.ttft_ms.p99,
                e2e_p99_ms: s.e2e_ms.p99,
                client_bound: s.client_bound.clone(),
            })
            .collect();
        if providers.is_empty() {
            bail!("{}: its load section has no step", path.display());
        }
        providers.sort_by(|a, b| a.provider.cmp(&b.provider));
        Ok(Probe { run: self.name.clone(), rate, providers })
    }
}
