//! The stage: open the run (its lock and schedule, fixed for the run's life), then print one
//! snapshot (`--once`) or run the terminal view, each refresh reading only what the log
//! gained since the last one.
use crate::args::Args;
use crate::follow::Follower;
use crate::snapshot::{self, Inputs, Plan, Snapshot};
use crate::tally::Tally;
use crate::{text, tui};
use anyhow::{Context, Result};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::Error;
use inferbench_judge::rules::Rules;
use inferbench_store::parquet_io;
use inferbench_store::run::RunDir;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

pub fn run(args: Args) -> Result<()> {
    let mut watch = Watch::open(&args)?;
    if !args.once {
        return tui::run(|| watch.refresh(), args.interval);
    }
    let snapshot = watch.refresh()?;
    let text = if args.json {
        serde_json::to_string_pretty(&snapshot).context("encoding the snapshot")? + "\n"
    } else {
        text::render(&snapshot)
    };
    std::io::stdout().lock().write_all(text.as_bytes()).context("writing the snapshot")?;
    Ok(())
}

/// A run being watched.
pub struct Watch {
    run: RunDir,
    plan: Plan,
    follower: Follower,
    tally: Tally,
    window: u64,
    rules: Rules,
}

impl Watch {
    pub fn open(args: &Args) -> Result<Watch> {
        let run = RunDir::new(&args.run);
        if !run.root().is_dir() {
            return Err(Error::bad(format!("{}: no such run directory", run.root().display())).into());
        }
        let lock = inferbench_store::lock::read(&run.lock()).context("reading the run's lock")?;
        if !run.schedule().exists() {
            let message = format!("{}: missing; run ib-schedule first", run.schedule().display());
            return Err(Error::bad(message).into());
        }
        let schedule = parquet_io::read::<ScheduleRow>(&run.schedule()).context("reading the run's schedule")?;
        let plan = Plan::new(&lock, &schedule.rows);
        let follower = Follower::new(run.clone(), &lock.run_id);
        Ok(Watch {
            run,
            plan,
            follower,
            tally: Tally::new(args.rules.rules),
            window: args.window,
            rules: args.rules.rules,
        })
    }

    /// Reads what the log gained and takes a snapshot. The writer lock is looked at first: a
    /// fetch that stops between the two has closed its segment (or was killed, and is then
    /// shown running once more), never a live fetch shown stopped.
    pub fn refresh(&mut self) -> Result<Snapshot> {
        let writer = self.run.writer();
        let tally = &mut self.tally;
        self.follower
            .poll(|segment, env| tally.add(segment, env))
            .with_context(|| format!("reading {}", self.run.events_dir().display()))?;
        let now_wall_ns = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        Ok(snapshot::build(&Inputs {
            plan: &self.plan,
            tally: &self.tally,
            last_seq: self.follower.last_seq(),
            torn_tail_bytes: self.follower.torn_tail(),
            writer: &writer,
            sealed: self.run.events_parquet().exists(),
            now_wall_ns,
            window: self.window,
            rules: self.rules,
        }))
    }
}
