//! The run: every input checked first, then the log written round by round (only a few
//! rounds' events in memory at a time), then sealed.
use crate::args::Args;
use crate::parallel;
use crate::profiles;
use crate::rounds::Rounds;
use crate::shares::Shares;
use crate::summary::Summary;
use anyhow::Result;
use inferbench_contract::event::{EndpointMode, Event, SegmentClosed, SegmentOpened, SegmentStatus};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::Error;
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::RunDir;
use inferbench_store::segment_writer::{opening, peak_rss_bytes, SegmentWriter};
use std::time::Instant;

pub fn run(args: Args) -> Result<()> {
    if args.seal_only {
        return seal_only(&args);
    }
    let shares = checked_flags(&args)?;
    let mut pipeline = Pipeline::open(&args.run, &args.spec)?;
    let writer_lock = pipeline.run.lock_for_writing("ib-synth")?;
    let (run, run_id) = (pipeline.run.clone(), pipeline.lock.run_id.clone());
    if !run.segments().unwrap_or_default().is_empty() {
        return Err(Error::bad(format!(
            "{}: the run already has an event log; ib-synth writes the log of a run that has none",
            run.events_dir().display()
        ))
        .into());
    }
    // Everything the generator holds is dropped when `generate` returns, before the seal,
    // whose memory is measured.
    let mut summary = generate(&args, &shares, &mut pipeline)?;
    eprintln!("{}", summary.written());
    if !args.no_seal {
        let start = Instant::now();
        summary.sealed_rows = Some(inferbench_store::sealed::seal(&run, &run_id)?.events);
        summary.seal_seconds = Some(start.elapsed().as_secs_f64());
    }
    drop(writer_lock);
    println!("{}", serde_json::to_string(&summary)?);
    Ok(())
}

/// `--seal-only`: seals the run's existing log and writes nothing else.
fn seal_only(args: &Args) -> Result<()> {
    let run = RunDir::new(&args.run.path);
    let run_id = inferbench_store::lock::read(&run.lock())?.run_id;
    let _writer = run.lock_for_writing("ib-synth")?;
    let start = Instant::now();
    let sealed = inferbench_store::sealed::seal(&run, &run_id)?;
    eprintln!("ib-synth: sealed {} events in {:.2} s", sealed.events, start.elapsed().as_secs_f64());
    Ok(())
}

/// The failure shares, accuracy and time scale of the command line, checked.
fn checked_flags(args: &Args) -> Result<Shares> {
    let shares = Shares::new([
        args.timeout,
        args.http_429,
        args.http_5xx,
        args.transport_error,
        args.invalid_stream,
        args.truncated,
        args.stream_error,
    ])?;
    if let Some(a) = args.accuracy.filter(|a| !(0.0..=1.0).contains(a)) {
        return Err(Error::bad(format!("--accuracy: must be between 0 and 1, got {a}")).into());
    }
    if !(args.time_scale.is_finite() && args.time_scale >= 0.0) {
        return Err(Error::bad(format!("--time-scale: must be a finite number >= 0, got {}", args.time_scale)).into());
    }
    Ok(shares)
}

/// Reads the run's inputs and writes its log, `events/0001.jsonl`: the segment's opening,
/// every round, the segment's close.
fn generate(args: &Args, shares: &Shares, pipeline: &mut Pipeline) -> Result<Summary> {
    let run = pipeline.run.clone();
    let data = pipeline.dataset(args.dataset.as_deref())?;
    let schedule: Vec<ScheduleRow> = pipeline.table(&run.schedule(), "ib-schedule")?;
    let all_shapes = profiles::load(&args.profiles)?;
    let shapes = profiles::for_providers(&all_shapes, &pipeline.lock.providers, &args.profiles)?;
    let pipeline = &*pipeline;
    let mut rounds = Rounds::new(args, shares, pipeline, &shapes, &data, &schedule)?;

    let started = Instant::now();
    let mut log = SegmentWriter::create(&run.segment(1), &pipeline.lock.run_id)?;
    log.write(0, &Event::SegmentOpened(segment_opened(pipeline, &schedule, rounds.deadline_ns())?))?;
    let mut log = parallel::write_in_order(log, |send| {
        for round in schedule.chunk_by(|a, b| a.round_index == b.round_index) {
            if !send(rounds.round(round)) {
                break;
            }
        }
    })?;
    let mut summary = std::mem::take(&mut rounds.summary);
    log.write(
        rounds.clock,
        &Event::SegmentClosed(SegmentClosed {
            segment: 1,
            status: SegmentStatus::Complete,
            terminal_requests: summary.requests,
            peak_rss_bytes: peak_rss_bytes(),
        }),
    )?;
    summary.events = log.next_seq();
    summary.log_bytes = log.bytes();
    log.finish()?;
    summary.generate_seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// The first event of the log: what a fetch records when it opens a segment, with this
/// machine's facts replaced by ib-synth's.
fn segment_opened(pipeline: &Pipeline, schedule: &[ScheduleRow], deadline_ns: u64) -> Result<SegmentOpened> {
    let spec = &pipeline.spec;
    Ok(SegmentOpened {
        scheduled_requests: schedule.len() as u64,
        deadline_ms: deadline_ns / 1_000_000,
        max_event_bytes: spec.inference.stream_limits.max_event_bytes,
        max_response_bytes: spec.inference.stream_limits.max_response_bytes,
        http_version: Some(spec.inference.transport.http_version.as_str().to_string()),
        execution_region: "synthetic (ib-synth, no network)".to_string(),
        host_sha256_16: inferbench_contract::canonical::sha256_hex(b"ib-synth")[..16].to_string(),
        ..opening(&pipeline.run, 1, EndpointMode::Simulated)?
    })
}
