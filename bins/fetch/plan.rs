//! The fetch's plan, made before the first byte is sent: the run's inputs checked against its
//! lock, one client per provider with its credentials, and the limits every request runs
//! under. Everything that can refuse a fetch without sending refuses here.
use crate::args::Args;
use crate::client::{Limits, ProviderClient};
use crate::credentials::{read_env_file, Credentials};
use anyhow::Result;
use inferbench_contract::event::EndpointMode;
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::TaskFamily;
use inferbench_contract::Error;
use inferbench_inputs::dataset::Dataset;
use inferbench_inputs::providers::simulated_endpoint;
use inferbench_inputs::spec::{HttpVersion, Spec, HTTP_VERSION_KEY};
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::{RunDir, WriterLock};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// What the fetch runs, and under which limits; read by every phase after this one.
pub struct Plan {
    pub run: RunDir,
    pub spec: Spec,
    pub data: Dataset,
    pub schedule: Vec<ScheduleRow>,
    pub clients: BTreeMap<String, Arc<ProviderClient>>,
    pub deadline: Duration,
    pub limits: Limits,
    pub endpoint_mode: EndpointMode,
    /// The run id, from the lock: a copied or renamed run directory resumes as the same run.
    pub run_id: String,
    /// Held for the whole fetch: a second fetch (or any stage) on this run refuses at once.
    _writer: WriterLock,
}

/// Everything is checked here, before the first byte is sent.
pub fn prepare(args: Args) -> Result<Plan> {
    refuse_imported(&RunDir::new(&args.run))?;
    let Args {
        run,
        spec: spec_path,
        dataset: dataset_dir,
        endpoint_base,
        send_credentials_to_simulator,
        env_file,
        deadline_seconds,
    } = args;
    let mut pipeline = Pipeline::open(&run, &spec_path)?;
    let writer = pipeline.run.lock_for_writing("ib-fetch")?;
    let data = pipeline.dataset(dataset_dir.as_deref())?;
    let schedule: Vec<ScheduleRow> = pipeline.table(&pipeline.run.schedule(), "ib-schedule")?;
    let Pipeline { run, spec, providers, lock, .. } = pipeline;
    let names: Vec<&str> = lock.providers.iter().map(String::as_str).collect();
    let env_values =
        read_env_file(&env_file, &providers.providers.iter().flat_map(|p| p.credential_names()).collect::<Vec<_>>());
    let http_version = spec.inference.transport.http_version;
    let mut clients = BTreeMap::new();
    let mut missing = Vec::new();
    for provider in providers.providers.iter().filter(|p| names.contains(&p.name.as_str())) {
        let (mut creds, absent) = Credentials::resolve(provider, &env_values);
        let endpoint = match &endpoint_base {
            Some(base) => {
                // A simulator is no place for real keys (and a stale IB_ENDPOINT_BASE must
                // not send them to whatever it names).
                if !send_credentials_to_simulator || !absent.is_empty() {
                    creds = Credentials::simulated(provider);
                }
                simulated_endpoint(base, &provider.name)
            }
            None => {
                missing.extend(absent);
                provider.endpoint.clone()
            }
        };
        let client = ProviderClient::new(provider.clone(), endpoint, creds, http_version)?;
        clients.insert(provider.name.clone(), Arc::new(client));
    }
    if !missing.is_empty() {
        return Err(Error::bad(format!(
            "missing credentials (set them in the environment or {}): {}; nothing was sent",
            env_file.display(),
            missing.join(", ")
        ))
        .into());
    }
    if http_version == HttpVersion::Http2 {
        // Not an error: the log records each response's version. But the operator who asked
        // for HTTP/2 learns before the run which providers cannot speak it.
        let plain: Vec<&str> = clients
            .iter()
            .filter(|(_, c)| c.endpoint.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("http://")))
            .map(|(name, _)| name.as_str())
            .collect();
        if !plain.is_empty() {
            eprintln!(
                "ib-fetch: {HTTP_VERSION_KEY} is \"2\", but these endpoints are plain http:// and speak HTTP/1.1 \
                 (HTTP/2 is negotiated over TLS only): {}",
                plain.join(", ")
            );
        }
    }
    let synthetic = spec.load.as_ref().is_some_and(|l| l.workload.synthetic().is_some());
    for row in &schedule {
        // A synthetic request carries its prompt and lengths (`ib-schedule` wrote them from
        // this spec); a dataset request names an item of the dataset.
        let sendable = match row.task_family {
            TaskFamily::Synthetic => {
                synthetic
                    && row.prompt.is_some()
                    && row.target_input_tokens.is_some_and(|n| n > 0)
                    && row.target_output_tokens.is_some_and(|n| (1..=i64::from(u32::MAX)).contains(&n))
            }
            family => !synthetic && data.item(family, &row.item_id).is_some(),
        };
        if !sendable || !clients.contains_key(&row.provider) {
            return Err(Error::bad(format!(
                "{}: request {}: unknown item or provider, or a synthetic request this spec does not send",
                run.schedule().display(),
                row.request_id
            ))
            .into());
        }
    }
    let deadline = Duration::from_secs_f64(deadline_seconds.unwrap_or(spec.inference.timeout_seconds));
    let endpoint_mode = if endpoint_base.is_some() { EndpointMode::Simulated } else { EndpointMode::Providers };
    let stream_limits = spec.inference.stream_limits;
    let limits = Limits {
        max_event_bytes: usize::try_from(stream_limits.max_event_bytes).unwrap_or(usize::MAX),
        max_response_bytes: stream_limits.max_response_bytes,
    };
    let run_id = lock.run_id.clone();
    Ok(Plan { run, spec, data, schedule, clients, deadline, limits, endpoint_mode, run_id, _writer: writer })
}

/// An imported run's log is the reference runner's record of its fetch: nothing is ever sent
/// for it (checked before anything else, credentials included).
fn refuse_imported(run: &RunDir) -> Result<()> {
    let imported = run.lock().exists() && inferbench_store::lock::read(&run.lock())?.imported_from.is_some();
    if imported {
        return Err(Error::bad(format!(
            "{}: this run was imported from a reference run (ib-import); its log is the reference's record and is \
             never fetched again; re-score it with `make rescore RUN={}`",
            run.root().display(),
            run.root().display()
        ))
        .into());
    }
    Ok(())
}
