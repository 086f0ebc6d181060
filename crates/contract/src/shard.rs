//! A share of one run's fetch: `ib-fetch --shard i/N` sends shard `i`'s share of the
//! schedule (0-based, as a Kubernetes Indexed Job numbers its pods), so that N processes on
//! one machine or several drive one run.
//!
//! Two rules make the shards' logs one log without any coordination between them:
//!
//! - **Which requests.** The unit of the share is the smallest one whose meaning one process
//!   must hold ([`ShareUnit`]): in the closed-loop workflow a provider (one request at a time
//!   per provider, its rounds behind one barrier); in an open-loop load step an arrival (every
//!   provider of an arrival is launched together by one process, at exactly the same intended
//!   time); in a capped step a provider (its cap and its queue); in a closed-loop load step a
//!   user (its requests one after the other). Unit `u` belongs to shard `u mod N`.
//! - **Which segment files.** Shard `i` writes segments `i + 1`, `i + 1 + N`, `i + 1 + 2N`, …:
//!   the numbers never collide, so the shards' `events/` files are brought together by copying
//!   them into one directory, and every reader reads the segments in number order as one log.
//!   Each shard numbers its own lines (`seq` from 0, gap-free within the shard).
use crate::tables::ScheduleRow;
use crate::vocab::LoadMode;
pub use crate::vocab::ShareUnit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Shard `index` of `count` (`index < count`, `count ≥ 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// The most shards a run may have: the segment numbers of every shard's resumes must fit the
/// four digits of `events/NNNN.jsonl` for long.
pub const MAX_SHARDS: u32 = 256;

impl Shard {
    /// Parses `i/N` (0 ≤ i < N ≤ [`MAX_SHARDS`]).
    pub fn parse(text: &str) -> std::result::Result<Shard, String> {
        let (i, n) = text.split_once('/').ok_or_else(|| format!("`{text}`: expected i/N, e.g. 0/4"))?;
        let number = |s: &str| s.trim().parse::<u32>().map_err(|_| format!("`{text}`: `{s}` is not a whole number"));
        let (index, count) = (number(i)?, number(n)?);
        if count == 0 || count > MAX_SHARDS {
            return Err(format!("`{text}`: N must be 1 to {MAX_SHARDS}"));
        }
        if index >= count {
            return Err(format!("`{text}`: i must be 0 to N − 1 (shards are numbered from 0)"));
        }
        Ok(Shard { index, count })
    }

    /// The number of this shard's `k`-th segment (`k` from 1).
    pub fn segment(&self, k: u32) -> u32 {
        self.index + 1 + (k - 1) * self.count
    }

    /// Whether segment `number` is one of this shard's.
    pub fn writes(&self, number: u32) -> bool {
        number >= 1 && (number - 1) % self.count == self.index
    }

    /// The shard of `count` that writes segment `number` (from 1).
    pub fn of_segment(number: u32, count: u32) -> Shard {
        Shard { index: (number.max(1) - 1) % count, count }
    }

    /// The number of this shard's next segment after `last` (its highest so far), or its first.
    pub fn next_segment(&self, last: Option<u32>) -> u32 {
        last.map_or(self.index + 1, |n| n + self.count)
    }

    /// Whether `row` is in this shard's share, `unit` being what the run shares by.
    pub fn owns(&self, unit: ShareUnit, row: &ScheduleRow, providers: &[String]) -> bool {
        unit.of(row, providers) % u64::from(self.count) == u64::from(self.index)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl ShareUnit {
    /// The unit of a run: `load` is its spec's load mode, `None` in the closed-loop workflow.
    pub fn of_run(load: Option<LoadMode>) -> ShareUnit {
        match load {
            None | Some(LoadMode::Capped) => ShareUnit::Provider,
            Some(LoadMode::OpenLoop) => ShareUnit::Round,
            Some(LoadMode::ClosedLoop) => ShareUnit::User,
        }
    }

    /// The unit `row` belongs to; `providers` is the lock's provider list. A provider not in
    /// it (the fetch refuses such a schedule before this matters) counts past the end.
    pub fn of(self, row: &ScheduleRow, providers: &[String]) -> u64 {
        match self {
            ShareUnit::Provider => providers.iter().position(|p| *p == row.provider).unwrap_or(providers.len()) as u64,
            ShareUnit::Round => row.round_index.max(0) as u64,
            ShareUnit::User => row.user.unwrap_or(0).max(0) as u64,
        }
    }
}

/// What a shard's `segment_opened` records of its shard (absent in an unsharded fetch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardOpened {
    pub index: u32,
    pub count: u32,
    /// What the schedule is shared out by.
    pub unit: ShareUnit,
    /// Requests in this shard's share of the schedule.
    pub requests: u64,
    /// The run clock's zero on the wall clock (UTC, ns since the Unix epoch), which every shard
    /// was given (`--start-at`): each shard's `t_ns` counts from it, so the shards' times are
    /// on one clock, as well as their machines' wall clocks agree.
    pub origin_unix_ns: u64,
}

impl ShardOpened {
    pub fn shard(&self) -> Shard {
        Shard { index: self.index, count: self.count }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(round: i64, provider: &str, user: Option<i64>) -> ScheduleRow {
        ScheduleRow { user, ..crate::testutil::schedule_row(round, provider) }
    }

    #[test]
    fn shards_parse_and_refuse_what_is_not_one() {
        assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
        assert_eq!(Shard::parse("0/1").unwrap().to_string(), "0/1");
        for bad in ["4/4", "1", "a/2", "0/0", "-1/2", "0/257"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_shards_segment_numbers_interleave_and_never_collide() {
        let shards: Vec<Shard> = (0..3).map(|index| Shard { index, count: 3 }).collect();
        let numbers: Vec<Vec<u32>> = shards.iter().map(|s| (1..=3).map(|k| s.segment(k)).collect()).collect();
        assert_eq!(numbers, [[1, 4, 7], [2, 5, 8], [3, 6, 9]]);
        for (shard, mine) in shards.iter().zip(&numbers) {
            assert!(mine.iter().all(|n| shard.writes(*n) && Shard::of_segment(*n, 3) == *shard));
            assert_eq!(shard.next_segment(None), mine[0]);
            assert_eq!(shard.next_segment(Some(mine[1])), mine[2]);
        }
    }

    #[test]
    fn every_row_is_in_exactly_one_share_by_its_unit() {
        let providers = ["a".to_string(), "b".to_string(), "c".to_string()];
        let rows: Vec<ScheduleRow> =
            (0..5).flat_map(|round| providers.iter().map(move |p| row(round, p, Some(round % 2)))).collect();
        for unit in [ShareUnit::Provider, ShareUnit::Round, ShareUnit::User] {
            let shards = [Shard { index: 0, count: 2 }, Shard { index: 1, count: 2 }];
            for r in &rows {
                assert_eq!(shards.iter().filter(|s| s.owns(unit, r, &providers)).count(), 1);
            }
        }
        let first = Shard { index: 0, count: 2 };
        let by_provider: Vec<&str> = rows
            .iter()
            .filter(|r| r.round_index == 0 && first.owns(ShareUnit::Provider, r, &providers))
            .map(|r| r.provider.as_str())
            .collect();
        assert_eq!(by_provider, ["a", "c"], "a provider's every request in one shard");
        let rounds: Vec<i64> = rows
            .iter()
            .filter(|r| r.provider == "a" && first.owns(ShareUnit::Round, r, &providers))
            .map(|r| r.round_index)
            .collect();
        assert_eq!(rounds, [0, 2, 4], "every provider of an arrival in one shard");
        assert_eq!(ShareUnit::of_run(None), ShareUnit::Provider);
        assert_eq!(ShareUnit::of_run(Some(LoadMode::OpenLoop)), ShareUnit::Round);
        assert_eq!(ShareUnit::of_run(Some(LoadMode::Capped)), ShareUnit::Provider);
        assert_eq!(ShareUnit::of_run(Some(LoadMode::ClosedLoop)), ShareUnit::User);
    }
}
