//! The rules every reader of the log applies, segment by segment and line by line.
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::shard::{Shard, ShardOpened};
use inferbench_contract::{Error, Result, FORMAT_VERSION};
use std::path::{Path, PathBuf};

/// The checks every reader of the log applies, segment by segment and line by line, so that
/// `event_log::read` (the whole log at once) and a reader following a live log (`ib-watch`) refuse
/// exactly the same logs with the same messages.
///
/// A sharded log (`ib-fetch --shard i/N`) is N logs in one directory, each checked as an
/// unsharded log is: shard `i` writes segments `i + 1`, `i + 1 + N`, … (no gap among them),
/// numbers its own lines from 0 without a gap or a repeat, and opens each segment with its own
/// `segment_opened`, which names the shard. Every shard must name the same N, share unit and
/// run-clock origin, and a log is either sharded or not, never both. Whether a shard is
/// missing altogether is for the reader to ask ([`Checker::missing_shards`]): while a run is
/// fetched, a shard may not have begun.
#[derive(Debug, Clone)]
pub struct Checker {
    run_id: String,
    /// Lines checked, in every shard.
    checked: u64,
    /// An unsharded log's next `seq`.
    unsharded_seq: u64,
    /// The next segment of an unsharded log (or of one whose sharding is not known yet).
    next_segment: u32,
    sharding: Sharding,
    /// Segments taken before any `segment_opened` said whether the log is sharded, checked once
    /// one does (a sharded log's first segment here need not be segment 1).
    deferred: Vec<(u32, PathBuf)>,
}

/// What the log's `segment_opened` lines have said of its shards so far.
#[derive(Debug, Clone)]
enum Sharding {
    /// No `segment_opened` read yet.
    Unknown,
    Unsharded,
    Sharded {
        first: ShardOpened,
        shards: std::collections::BTreeMap<u32, ShardRead>,
    },
}

/// One shard of a sharded log, as checked so far.
#[derive(Debug, Clone, Default)]
struct ShardRead {
    next_seq: u64,
    last_segment: Option<u32>,
}

impl Checker {
    /// A checker for the log of the run whose lock names it `run_id`.
    pub fn new(run_id: &str) -> Checker {
        Checker {
            run_id: run_id.to_string(),
            checked: 0,
            unsharded_seq: 0,
            next_segment: 1,
            sharding: Sharding::Unknown,
            deferred: Vec::new(),
        }
    }

    /// Lines checked so far: in an unsharded log, the `seq` the next line must carry.
    pub fn next_seq(&self) -> u64 {
        self.checked
    }

    /// The log's shard count, once a `segment_opened` named one; `None` while unsharded.
    pub fn shard_count(&self) -> Option<u32> {
        match &self.sharding {
            Sharding::Sharded { first, .. } => Some(first.count),
            _ => None,
        }
    }

    /// The shards of a sharded log with no segment read: a shard that never ran, or whose files
    /// were not brought into this run's `events/`.
    pub fn missing_shards(&self) -> Vec<Shard> {
        match &self.sharding {
            Sharding::Sharded { first, shards } => (0..first.count)
                .filter(|i| shards.get(i).is_none_or(|s| s.last_segment.is_none()))
                .map(|index| Shard { index, count: first.count })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// [`Checker::missing_shards`] as an error naming them, for a reader that needs the whole log.
    pub fn require_every_shard(&self, events: &Path) -> Result<()> {
        let missing = self.missing_shards();
        if missing.is_empty() {
            return Ok(());
        }
        let names: Vec<String> =
            missing.iter().map(|s| format!("shard {s} (segments {}, {}, …)", s.segment(1), s.segment(2))).collect();
        Err(Error::bad(format!(
            "{}: the log has no segment of {}: a shard that has not run, or whose events/ files were not copied here",
            events.display(),
            names.join(", ")
        )))
    }

    /// Segment file `number` (at `path`) follows the segments checked so far.
    pub fn segment(&mut self, number: u32, path: &Path) -> Result<()> {
        if let Sharding::Unknown = self.sharding {
            self.deferred.push((number, path.to_path_buf()));
            return Ok(());
        }
        self.take_segment(number, path)
    }

    fn take_segment(&mut self, number: u32, path: &Path) -> Result<()> {
        if let Sharding::Sharded { first, shards } = &mut self.sharding {
            let shard = Shard::of_segment(number, first.count);
            let read = shards.entry(shard.index).or_default();
            let expected = shard.next_segment(read.last_segment);
            if number != expected {
                return Err(Error::bad(match read.last_segment {
                    Some(last) => format!(
                        "{}: segment {number} of shard {shard} follows its segment {last}; segment {expected} is missing",
                        path.display()
                    ),
                    None => format!(
                        "{}: segment {number} is shard {shard}'s first; its segment {expected} is missing",
                        path.display()
                    ),
                }));
            }
            read.last_segment = Some(number);
            return Ok(());
        }
        if number != self.next_segment {
            return Err(Error::bad(format!(
                "{}: segment {number} follows segment {}; a segment file is missing",
                path.display(),
                self.next_segment - 1
            )));
        }
        self.next_segment += 1;
        Ok(())
    }

    /// Line `line` (1-based) of segment `number`, at `path`.
    pub fn line(&mut self, path: &Path, number: u32, line: usize, env: &Envelope) -> Result<()> {
        let at = || format!("{}:{line}", path.display());
        if env.v != FORMAT_VERSION {
            return Err(Error::bad(format!("{}: v: format version {} is not supported", at(), env.v)));
        }
        if env.run_id != self.run_id {
            return Err(Error::bad(format!(
                "{}: run_id: `{}` is not this run (`{}`); a line from another run's log",
                at(),
                env.run_id,
                self.run_id
            )));
        }
        if let (Event::SegmentOpened(s), 1) = (&env.event, line) {
            if s.segment == number {
                self.sharding(path, number, line, s.shard.as_ref())?;
            }
        }
        let next_seq = match &mut self.sharding {
            Sharding::Sharded { first, shards } => {
                &mut shards.entry(Shard::of_segment(number, first.count).index).or_default().next_seq
            }
            _ => &mut self.unsharded_seq,
        };
        if env.seq != *next_seq {
            let what = if env.seq < *next_seq { "a repeated or duplicated line" } else { "lines are missing" };
            return Err(Error::bad(format!("{}: seq: {} where {} was expected ({what})", at(), env.seq, *next_seq)));
        }
        match (&env.event, line) {
            (Event::SegmentOpened(s), 1) if s.segment == number => {}
            (_, 1) => return Err(Error::bad(format!("{}: a segment must open with its own segment_opened", at()))),
            (Event::SegmentOpened(_), _) => {
                return Err(Error::bad(format!("{}: segment_opened in the middle of a segment", at())))
            }
            _ => {}
        }
        *next_seq += 1;
        self.checked += 1;
        Ok(())
    }

    /// Takes what segment `number`'s `segment_opened` says of its shard: the log's sharding,
    /// once known, must stay the same, and the segment must be its shard's by its number.
    fn sharding(&mut self, path: &Path, number: u32, line: usize, shard: Option<&ShardOpened>) -> Result<()> {
        let at = || format!("{}:{line}", path.display());
        let mixed = || {
            Error::bad(format!(
                "{}: shard: a log is fetched either whole or by shards (ib-fetch --shard), never both; this segment \
                 is {}, the ones before it are not",
                at(),
                if shard.is_some() { "a shard's" } else { "unsharded" }
            ))
        };
        match (&mut self.sharding, shard) {
            (Sharding::Unknown, None) => self.sharding = Sharding::Unsharded,
            (Sharding::Unknown, Some(opened)) => {
                self.sharding = Sharding::Sharded { first: opened.clone(), shards: Default::default() }
            }
            (Sharding::Unsharded, None) => {}
            (Sharding::Unsharded, Some(_)) | (Sharding::Sharded { .. }, None) => return Err(mixed()),
            (Sharding::Sharded { first, .. }, Some(opened)) => {
                if (opened.count, opened.unit, opened.origin_unix_ns) != (first.count, first.unit, first.origin_unix_ns)
                {
                    return Err(Error::bad(format!(
                        "{}: shard: shard {} was started as one of {} shards by {:?} from origin {} ns, the log's first \
                         shard as one of {} by {:?} from {} ns; every shard of a run is given the same --shard N and \
                         --start-at",
                        at(),
                        opened.shard(),
                        opened.count,
                        opened.unit,
                        opened.origin_unix_ns,
                        first.count,
                        first.unit,
                        first.origin_unix_ns
                    )));
                }
            }
        }
        for (number, path) in std::mem::take(&mut self.deferred) {
            self.take_segment(number, &path)?;
        }
        if let (Sharding::Sharded { first, .. }, Some(opened)) = (&self.sharding, shard) {
            let by_number = Shard::of_segment(number, first.count);
            if by_number != opened.shard() {
                return Err(Error::bad(format!(
                    "{}: shard: segment {number} is shard {by_number}'s by its number, but it names shard {}",
                    at(),
                    opened.shard()
                )));
            }
        }
        Ok(())
    }
}
