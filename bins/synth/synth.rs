//! The run: every input checked first, then the log written round by round (only one round's
//! events in memory at a time), then sealed.
use crate::answer::{self, Chunks};
use crate::args::Args;
use crate::dataset as sim;
use crate::plan::{self, Request};
use crate::profiles::{self, Shape};
use crate::rng::SplitMix64;
use crate::shares::{Class, Shares, Stratifier};
use crate::writer::{self, SegmentWriter};
use anyhow::{Context, Result};
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::event::{
    EndpointMode, Event, RequestStarted, RoundClosed, RoundReleased, SegmentClosed, SegmentOpened, SegmentStatus,
};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::TaskFamily;
use inferbench_contract::{Error, CODE_VERSION, USER_AGENT};
use inferbench_inputs::dataset::Item;
use inferbench_inputs::providers::{simulated_endpoint, slug, Auth, Provider};
use inferbench_judge::tokenizer;
use inferbench_store::event_log;
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::RunDir;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The run clock between one round's close and the next round's release, and between the
/// release and the first send: a fetch's scheduling overhead on a fast machine.
const ROUND_GAP_NS: u64 = 20_000;
const FIRST_SEND_NS: u64 = 5_000;
/// Between two sends of one round (the launch order).
const LAUNCH_STEP_NS: u64 = 2_000;

/// What the run holds, by outcome class and answer: printed as one JSON line on stdout.
#[derive(Debug, Default, serde::Serialize)]
pub struct Summary {
    pub requests: u64,
    pub rounds: u64,
    pub events: u64,
    pub log_bytes: u64,
    /// Requests by `operational_outcome` (`2xx`, `timeout`, `429`, …).
    pub outcomes: BTreeMap<String, u64>,
    /// Completed requests whose answer is the gold.
    pub correct_answers: u64,
    pub generate_seconds: f64,
    pub seal_seconds: Option<f64>,
    pub sealed_rows: Option<u64>,
}

pub fn run(args: Args) -> Result<()> {
    if args.seal_only {
        let run = RunDir::new(&args.run.path);
        let run_id = inferbench_store::lock::read(&run.lock())?.run_id;
        let _writer = run.lock_for_writing("ib-synth")?;
        let start = Instant::now();
        let sealed = event_log::seal(&run, &run_id)?;
        eprintln!("ib-synth: sealed {} events in {:.2} s", sealed.events, start.elapsed().as_secs_f64());
        return Ok(());
    }
    let shares = Shares::new([
        args.timeout,
        args.http_429,
        args.http_5xx,
        args.transport_error,
        args.invalid_stream,
        args.truncated,
        args.stream_error,
    ])
    .map_err(|e| Error::bad(format!("{e:#}")))?;
    if let Some(a) = args.accuracy.filter(|a| !(0.0..=1.0).contains(a)) {
        return Err(Error::bad(format!("--accuracy: must be between 0 and 1, got {a}")).into());
    }
    if !(args.time_scale.is_finite() && args.time_scale >= 0.0) {
        return Err(Error::bad(format!("--time-scale: must be a finite number >= 0, got {}", args.time_scale)).into());
    }
    let mut pipeline = Pipeline::open(&args.run, &args.spec)?;
    let writer_lock = pipeline.run.lock_for_writing("ib-synth")?;
    let run = pipeline.run.clone();
    let run_id = pipeline.lock.run_id.clone();
    if !run.segments().unwrap_or_default().is_empty() {
        return Err(Error::bad(format!(
            "{}: the run already has an event log; ib-synth writes the log of a run that has none",
            run.events_dir().display()
        ))
        .into());
    }
    // Everything the generator holds is dropped at the end of this block, before the seal,
    // whose memory is measured.
    let summary = {
        let data = pipeline.dataset(args.dataset.as_deref())?;
        let schedule: Vec<ScheduleRow> = pipeline.table(&run.schedule(), "ib-schedule")?;
        let all_shapes = profiles::load(&args.profiles)?;
        let names = pipeline.lock.providers.clone();
        let shapes = profiles::for_providers(&all_shapes, &names, &args.profiles)?;
        let providers: HashMap<&str, (&Provider, &Shape)> = names
            .iter()
            .zip(&shapes)
            .filter_map(|(name, shape)| pipeline.providers.get(name).map(|p| (name.as_str(), (p, shape))))
            .collect();
        let items: HashMap<(&str, &str), &Item> =
            data.items.values().flatten().map(|i| ((i.family.as_str(), i.id.as_str()), i)).collect();
        for row in &schedule {
            if !items.contains_key(&(row.task_family.as_str(), row.item_id.as_str()))
                || !providers.contains_key(row.provider.as_str())
            {
                return Err(Error::bad(format!(
                    "{}: request {}: unknown item or provider",
                    run.schedule().display(),
                    row.request_id
                ))
                .into());
            }
        }
        let spec = &pipeline.spec;
        let deadline_ns = (spec.inference.timeout_seconds * 1e9) as u64;
        let wrong = WrongMeeting::new(data.items.values().flatten());

        std::fs::create_dir_all(run.events_dir())
            .with_context(|| format!("creating {}", run.events_dir().display()))?;
        let started = Instant::now();
        let mut log = SegmentWriter::create(&run.segment(1), &run_id)?;
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        log.write(
            0,
            Event::SegmentOpened(SegmentOpened {
                segment: 1,
                wall_clock_unix_ns: wall,
                code_version: CODE_VERSION.to_string(),
                schedule_sha256: file_sha256(&run.schedule())?,
                scheduled_requests: schedule.len() as u64,
                already_terminal: 0,
                endpoint_mode: EndpointMode::Simulated,
                deadline_ms: deadline_ns / 1_000_000,
                max_event_bytes: spec.inference.stream_limits.max_event_bytes,
                max_response_bytes: spec.inference.stream_limits.max_response_bytes,
                http_version: Some(spec.inference.transport.http_version.as_str().to_string()),
                execution_region: "synthetic (ib-synth, no network)".to_string(),
                host_sha256_16: inferbench_contract::canonical::sha256_hex(b"ib-synth")[..16].to_string(),
                os: std::env::consts::OS.to_string(),
                arch: std::env::consts::ARCH.to_string(),
            }),
        )?;

        let mut summary = Summary::default();
        let mut stratifiers: HashMap<&str, Stratifier> =
            names.iter().map(|n| (n.as_str(), Stratifier::new(args.seed, n, &shares))).collect();
        let mut counters: HashMap<&str, u64> = HashMap::new();
        let mut reasoning_cache: HashMap<(usize, usize), Chunks> = HashMap::new();
        let mut system_tokens: HashMap<String, usize> = HashMap::new();
        let empty = sim::Dataset::default();
        // Rounds are planned here in order, serialised by worker threads (the most of the
        // cost) and written in order by one writer; every channel is bounded, so a few rounds
        // are in memory at a time whatever the run's size.
        let threads = inferbench_store::worker_threads();
        let (work_tx, work_rx) = sync_channel::<(u64, u64, Vec<(u64, Event)>)>(threads * 2);
        let work_rx = Arc::new(Mutex::new(work_rx));
        let (done_tx, done_rx) = sync_channel::<Result<(u64, Vec<u8>, u64)>>(threads * 2);
        let mut seq = log.lines();
        let mut clock = ROUND_GAP_NS;
        let log = std::thread::scope(|scope| -> Result<SegmentWriter> {
            for _ in 0..threads {
                let (work_rx, done_tx, run_id) = (Arc::clone(&work_rx), done_tx.clone(), run_id.as_str());
                scope.spawn(move || loop {
                    let job = work_rx.lock().map_err(|_| ()).and_then(|rx| rx.recv().map_err(|_| ()));
                    let Ok((n, first_seq, events)) = job else { break };
                    let lines = events.len() as u64;
                    let bytes = writer::serialize(run_id, first_seq, events).map(|b| (n, b, lines));
                    if done_tx.send(bytes).is_err() {
                        break;
                    }
                });
            }
            drop((work_rx, done_tx));
            let writer = scope.spawn(move || -> Result<SegmentWriter> {
                let mut pending = BTreeMap::new();
                let mut next = 0;
                for done in done_rx {
                    let (n, bytes, lines) = done?;
                    pending.insert(n, (bytes, lines));
                    while let Some((bytes, lines)) = pending.remove(&next) {
                        log.append_serialized(&bytes, lines)?;
                        next += 1;
                    }
                }
                Ok(log)
            });
            for round in schedule.chunk_by(|a, b| a.round_index == b.round_index) {
                let first = &round[0];
                let item = items[&(first.task_family.as_str(), first.item_id.as_str())];
                let sim_items = sim::Dataset::from_items(std::iter::once(item));
                let sim_item = &sim_items.items()[0];
                let system =
                    *system_tokens.entry(item.system.clone()).or_insert_with(|| tokenizer::count(&item.system));
                let prompt_tokens = 3 + (3 + system) + (3 + tokenizer::count(&item.user));
                let gold = answer::render(&sim_item.gold);
                let mut gold_chunks: HashMap<usize, Chunks> = HashMap::new();

                let mut events: Vec<(u64, Event)> = Vec::with_capacity(round.len() * 64 + 2);
                events.push((
                    clock,
                    Event::RoundReleased(RoundReleased {
                        round_id: first.round_id.clone(),
                        round_index: first.round_index as u64,
                        request_ids: round.iter().map(|r| r.request_id.clone()).collect(),
                    }),
                ));
                let mut sends = Vec::with_capacity(round.len());
                for (i, row) in round.iter().enumerate() {
                    let (provider, shape) = providers[row.provider.as_str()];
                    let counter = counters.entry(row.provider.as_str()).or_insert(0);
                    let n = *counter;
                    *counter += 1;
                    let class =
                        stratifiers.get_mut(row.provider.as_str()).map(|s| s.class(n)).unwrap_or(Class::Completed);
                    let mut rng = SplitMix64::new(args.seed ^ fnv(row.request_id.as_bytes()));
                    let accuracy = args.accuracy.unwrap_or(shape.accuracy);
                    let correct = rng.next_f64() < accuracy;
                    let tpc = shape.tokens_per_chunk;
                    let wrong_chunks;
                    let answer_chunks = if correct {
                        &*gold_chunks.entry(tpc).or_insert_with(|| answer::tokenize(&gold, tpc))
                    } else {
                        let text = match wrong.pick(item, &mut rng) {
                            Some(text) => text,
                            None => answer::render(&answer::wrong_gold(sim_item, &empty, &mut rng)),
                        };
                        wrong_chunks = answer::tokenize(&text, tpc);
                        &wrong_chunks
                    };
                    let reasoning_tokens = if shape.reasoning_mean > 0.0 {
                        let lo = (shape.reasoning_mean * 0.5).round().max(1.0) as usize;
                        let hi = ((shape.reasoning_mean * 1.5).round() as usize).max(lo);
                        lo + rng.below(hi - lo + 1)
                    } else {
                        0
                    };
                    let reasoning = reasoning_cache
                        .entry((reasoning_tokens, tpc))
                        .or_insert_with(|| answer::reasoning(reasoning_tokens, tpc, false));
                    let send = clock + FIRST_SEND_NS + LAUNCH_STEP_NS * i as u64;
                    sends.push(send);
                    events.push((
                        send,
                        Event::RequestStarted(RequestStarted {
                            request_id: row.request_id.clone(),
                            attempt: 1,
                            round_id: row.round_id.clone(),
                            round_index: row.round_index as u64,
                            provider: row.provider.clone(),
                            task_family: row.task_family,
                            item_id: row.item_id.clone(),
                            endpoint: simulated_endpoint("http://127.0.0.1", &provider.name),
                            body: provider.body(spec, &item.system, &item.user),
                            headers: request_headers(provider),
                            intended_t_ns: clock,
                        }),
                    ));
                    let provider_slug = slug(&provider.name);
                    let req = Request {
                        request_id: &row.request_id,
                        slug: &provider_slug,
                        counter: n,
                        model: &provider.model_id,
                        shape,
                        class,
                        answer: answer_chunks,
                        reasoning,
                        prompt_tokens,
                        usage: provider.stream_usage,
                        time_scale: args.time_scale,
                        deadline_ns,
                    };
                    for (offset, event) in plan::plan(&req, &mut rng) {
                        events.push((send + offset, event));
                    }
                    *summary.outcomes.entry(class.operational().to_string()).or_insert(0) += 1;
                    summary.correct_answers += u64::from(class == Class::Completed && correct);
                }
                // Interleaved by arrival, as the requests of a round stream at once; a stable sort
                // keeps each request's own order for events of the same instant.
                events.sort_by_key(|(t, _)| *t);
                let end = events.last().map(|(t, _)| *t).unwrap_or(clock);
                let skew = sends.last().copied().unwrap_or(0) - sends.first().copied().unwrap_or(0);
                events.push((
                    end + 1_000,
                    Event::RoundClosed(RoundClosed {
                        round_id: first.round_id.clone(),
                        round_index: first.round_index as u64,
                        launch_skew_ns: skew,
                        resumed_partial_round: false,
                    }),
                ));
                let lines = events.len() as u64;
                if work_tx.send((summary.rounds, seq, events)).is_err() {
                    break;
                }
                seq += lines;
                clock = end + 1_000 + ROUND_GAP_NS;
                summary.rounds += 1;
                summary.requests += round.len() as u64;
            }
            drop(work_tx);
            writer.join().map_err(|_| anyhow::anyhow!("the log writer panicked"))?
        })?;
        let mut log = log;
        log.write(
            clock,
            Event::SegmentClosed(SegmentClosed {
                segment: 1,
                status: SegmentStatus::Complete,
                terminal_requests: summary.requests,
                peak_rss_bytes: peak_rss_bytes(),
            }),
        )?;
        summary.events = log.lines();
        summary.log_bytes = log.bytes();
        log.finish()?;
        summary.generate_seconds = started.elapsed().as_secs_f64();
        summary
    };
    let mut summary = summary;
    eprintln!(
        "ib-synth: {} requests in {} rounds, {} events, {:.1} MB of JSONL in {:.1} s",
        summary.requests,
        summary.rounds,
        summary.events,
        summary.log_bytes as f64 / 1e6,
        summary.generate_seconds
    );
    if !args.no_seal {
        let start = Instant::now();
        summary.sealed_rows = Some(event_log::seal(&run, &run_id)?.events);
        summary.seal_seconds = Some(start.elapsed().as_secs_f64());
    }
    drop(writer_lock);
    println!("{}", serde_json::to_string(&summary)?);
    Ok(())
}

/// The headers `ib-fetch` sends and logs: its fixed ones, and the credential headers of the
/// provider's auth, redacted.
fn request_headers(provider: &Provider) -> BTreeMap<String, String> {
    let mut headers: BTreeMap<String, String> = [
        ("Accept", "text/event-stream"),
        ("Accept-Encoding", "identity"),
        ("Content-Type", "application/json"),
        ("User-Agent", USER_AGENT),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    match &provider.auth {
        Auth::Bearer { .. } => {
            headers.insert("Authorization".to_string(), "<redacted>".to_string());
        }
        Auth::Headers { headers: named } => {
            for name in named.keys() {
                headers.insert(name.clone(), "<redacted>".to_string());
            }
        }
    }
    headers
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// This process's peak resident set size (Linux `VmHWM`), as `ib-fetch` records it.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Wrong meeting-notes answers in constant time: the values stated in other notes, by kind
/// (ib-sim's `answer::wrong_gold` scans the whole dataset for each, which a dataset of a
/// hundred thousand items cannot afford a million times).
struct WrongMeeting {
    by_kind: HashMap<String, Vec<String>>,
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

impl WrongMeeting {
    fn new<'a>(items: impl Iterator<Item = &'a Item>) -> WrongMeeting {
        let mut by_kind: HashMap<String, Vec<String>> = HashMap::new();
        for item in items.filter(|i| i.family == TaskFamily::MeetingNotesLookup) {
            if let (Some(kind), Some(value)) = (item.gold["type"].as_str(), item.gold["value"].as_str()) {
                by_kind.entry(kind.to_string()).or_default().push(value.to_string());
            }
        }
        WrongMeeting { by_kind }
    }

    /// A value of the same kind from another note that is neither the gold nor an alias;
    /// `None` for the other families, or when no such value is found in a few draws.
    fn pick(&self, item: &Item, rng: &mut SplitMix64) -> Option<String> {
        let value = item.gold.get("value").and_then(Value::as_str)?;
        let kind = item.gold.get("type").and_then(Value::as_str)?;
        let values = self.by_kind.get(kind).filter(|v| !v.is_empty())?;
        let taken: Vec<String> =
            std::iter::once(value).chain(item.aliases.iter().map(String::as_str)).map(norm).collect();
        for _ in 0..16 {
            let candidate = &values[rng.below(values.len())];
            if !taken.contains(&norm(candidate)) {
                return Some(format!("{{\"answer\":{}}}", Value::from(candidate.as_str())));
            }
        }
        None
    }
}
