//! The fetch's plan, made before the first byte is sent: the run's inputs checked against its
//! lock, one client per provider with its credentials, and the limits every request runs
//! under. Everything that can refuse a fetch without sending refuses here.
use crate::args::Args;
use crate::client::{Limits, ProviderClient};
use crate::credentials::{read_env_file, Credentials};
use anyhow::Result;
use inferbench_contract::event::EndpointMode;
use inferbench_contract::shard::{Shard, ShareUnit};
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
    /// Requests in the whole schedule (`schedule` holds only a shard's share).
    pub scheduled_total: u64,
    /// With `--shard`: which shard, and when its steps open.
    pub shard: Option<ShardPlan>,
    /// Held for the whole fetch: a second fetch (or any stage) on this run refuses at once. A
    /// shard lets it go before it looks whether it can seal ([`Plan::release`]).
    writer: std::sync::Mutex<Option<WriterLock>>,
}

/// One shard's part: its place, what the run is shared out by, and its origin (`--start-at`,
/// or the one the log records).
pub struct ShardPlan {
    pub shard: Shard,
    pub unit: ShareUnit,
    /// `None` until the log is scanned when `--start-at` was not given ([`ShardPlan::origin`]).
    pub start_at_unix_ns: Option<u64>,
    /// A load run's steps' planned openings on the run clock (ns from the origin).
    pub step_zeros: Vec<u64>,
}

/// How long after the origin a sharded load run's first step opens: time for every shard to
/// open its segment and build its first rounds.
pub const FIRST_STEP_NS: u64 = 1_000_000_000;

/// What a sharded step's planned span is padded with beyond the deadline of its last request.
pub const STEP_GAP_NS: u64 = 1_000_000_000;

impl Plan {
    /// Lets the run's writer lock go (a shard's, once its segment is closed).
    pub fn release(&self) {
        if let Ok(mut writer) = self.writer.lock() {
            writer.take();
        }
    }
}

/// The planned opening of each step of a sharded load run, on the run clock: the shards open
/// every step at the same instant without talking to each other, so each step's requests have
/// the same intended times as in one process. The first opens [`FIRST_STEP_NS`] after the
/// origin; each next one once the one before must be over: its last arrival plus the deadline
/// (every request ends by its deadline), or in a closed-loop step each user's requests one
/// after the other, each within the deadline; plus [`STEP_GAP_NS`].
pub fn step_zeros(
    load: Option<&inferbench_inputs::spec::LoadPlan>,
    schedule: &[ScheduleRow],
    deadline: Duration,
) -> Vec<u64> {
    let Some(load) = load else { return Vec::new() };
    let deadline_ns = deadline.as_nanos() as u64;
    let mut zeros = Vec::with_capacity(load.steps.len());
    let mut zero = FIRST_STEP_NS;
    for (index, target) in load.steps.iter().enumerate() {
        zeros.push(zero);
        let span = match target {
            inferbench_inputs::spec::StepTarget::Users(_) => {
                u64::from(load.requests_per_user.unwrap_or(1).max(1)) * deadline_ns
            }
            _ => {
                let last = schedule
                    .iter()
                    .filter(|r| r.step == Some(index as i64))
                    .filter_map(|r| r.intended_offset_ns)
                    .max()
                    .unwrap_or(0)
                    .max(0) as u64;
                last + deadline_ns
            }
        };
        zero += span + STEP_GAP_NS;
    }
    zeros
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
        shard,
        start_at,
        seal_only: _,
    } = args;
    let mut pipeline = Pipeline::open(&run, &spec_path)?;
    let writer = match shard {
        Some(shard) => pipeline.run.lock_shard_for_writing("ib-fetch", shard)?,
        None => pipeline.run.lock_for_writing("ib-fetch")?,
    };
    let data = pipeline.dataset(dataset_dir.as_deref())?;
    let mut schedule: Vec<ScheduleRow> = pipeline.table(&pipeline.run.schedule(), "ib-schedule")?;
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
                simulated_endpoint(base, &provider.name, provider.api(spec.inference.api))
            }
            None => {
                missing.extend(absent);
                provider.endpoint.clone()
            }
        };
        let client =
            ProviderClient::new(provider.clone(), provider.api(spec.inference.api), endpoint, creds, http_version)?;
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
    let scheduled_total = schedule.len() as u64;
    let shard = shard.map(|shard| {
        let unit = ShareUnit::of_run(spec.load.as_ref().map(|l| l.mode));
        let step_zeros = step_zeros(spec.load.as_ref(), &schedule, deadline);
        schedule.retain(|row| shard.owns(unit, row, &lock.providers));
        ShardPlan { shard, unit, start_at_unix_ns: start_at, step_zeros }
    });
    Ok(Plan {
        run,
        spec,
        data,
        schedule,
        clients,
        deadline,
        limits,
        endpoint_mode,
        run_id,
        scheduled_total,
        shard,
        writer: std::sync::Mutex::new(Some(writer)),
    })
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
