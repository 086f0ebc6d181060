//! Paired rounds (reference runner §6.2). Round `r` takes the `r / F`-th selected item of
//! family `r mod F`; its launch order is the provider list rotated left by `r mod P`; ids are
//! `round-`/`req-` plus the first 24 hex digits of a SHA-256 over the round's content.
use inferbench_contract::canonical::sha256_hex;
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::TaskFamily;

/// `0` is the reference's attempt identity of a full run; the ids match its full runs.
const ATTEMPT_IDENTITY: &str = "0";

/// `prefix-` and the first 24 hex digits of a SHA-256 over `parts`, each ended by a NUL.
pub fn short_hash(prefix: &str, parts: &[&str]) -> String {
    format!("{prefix}-{}", &sha256_hex(parts.join("\0").as_bytes())[..24])
}

pub fn round_id(version: &str, round_index: usize, family: &str, item_id: &str) -> String {
    short_hash("round", &[version, &round_index.to_string(), family, item_id, ATTEMPT_IDENTITY])
}

pub fn request_id(version: &str, provider: &str, round_index: usize, family: &str, item_id: &str) -> String {
    short_hash("req", &[version, provider, &round_index.to_string(), family, item_id, ATTEMPT_IDENTITY])
}

/// `selected[f]` are family `f`'s selected item ids in order; all families have the same count.
/// The launch order of round `round_index`: the providers rotated by one place a round, so
/// that each provider launches first equally often.
pub fn launch_order(providers: &[String], round_index: usize) -> impl Iterator<Item = &String> {
    let offset = round_index % providers.len().max(1);
    providers[offset..].iter().chain(&providers[..offset])
}

/// The rows of round `round_index` (`round_id`): item `item_id` of `family` sent to every
/// provider in the round's launch order, the request id of each from `request_id(provider)`.
pub fn round_rows<'a>(
    round_index: usize,
    round_id: &'a str,
    family: TaskFamily,
    item_id: &'a str,
    providers: &'a [String],
    request_id: impl Fn(&str) -> String + 'a,
) -> impl Iterator<Item = ScheduleRow> + 'a {
    launch_order(providers, round_index).enumerate().map(move |(launch_index, provider)| {
        let id = request_id(provider);
        let (round, launch) = (round_index as i64, launch_index as i64);
        ScheduleRow::new(round, round_id.into(), family, item_id.into(), provider.clone(), launch, id)
    })
}

pub fn build(version: &str, families: &[(TaskFamily, Vec<String>)], providers: &[String]) -> Vec<ScheduleRow> {
    let per_family = families.iter().map(|(_, ids)| ids.len()).min().unwrap_or(0);
    let mut rows = Vec::new();
    let mut round_index = 0usize;
    for item_index in 0..per_family {
        for &(family, ref ids) in families {
            let item_id = &ids[item_index];
            let round_id = round_id(version, round_index, family.as_str(), item_id);
            let id = |provider: &str| request_id(version, provider, round_index, family.as_str(), item_id);
            rows.extend(round_rows(round_index, &round_id, family, item_id, providers, id));
            round_index += 1;
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERSION: &str = "micro-single-task-paired-round-robin-sha256-v1";

    #[test]
    fn ids_match_the_reference_full_run_vectors() {
        // seed-runner.md Appendix A.
        assert_eq!(
            round_id(VERSION, 0, "meeting-notes-lookup", "meeting-notes-lookup-0000"),
            "round-dcc1280b18048fc6763d8443"
        );
        assert_eq!(
            request_id(VERSION, "Z.AI", 0, "meeting-notes-lookup", "meeting-notes-lookup-0000"),
            "req-a411849b268d10e288a6efb1"
        );
    }

    #[test]
    fn rounds_alternate_families_and_rotate_launch_order() {
        use TaskFamily::{ContractTermsExtraction as C, MeetingNotesLookup as M, TicketTriage as T};
        let families = vec![
            (M, vec!["m1".to_string(), "m2".to_string()]),
            (T, vec!["t1".to_string(), "t2".to_string()]),
            (C, vec!["c1".to_string(), "c2".to_string()]),
        ];
        let providers: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let rows = build(VERSION, &families, &providers);
        assert_eq!(rows.len(), 6 * 4);
        let round_families: Vec<TaskFamily> = rows.chunks(4).map(|r| r[0].task_family).collect();
        assert_eq!(round_families, [M, T, C, M, T, C]);
        let items: Vec<&str> = rows.chunks(4).map(|r| r[0].item_id.as_str()).collect();
        assert_eq!(items, ["m1", "t1", "c1", "m2", "t2", "c2"]);
        let second: Vec<&str> = rows[4..8].iter().map(|r| r.provider.as_str()).collect();
        assert_eq!(second, ["b", "c", "d", "a"]);
        let fifth: Vec<&str> = rows[16..20].iter().map(|r| r.provider.as_str()).collect();
        assert_eq!(fifth, ["a", "b", "c", "d"], "round 4 wraps around");
        let unique: std::collections::HashSet<_> = rows.iter().map(|r| &r.request_id).collect();
        assert_eq!(unique.len(), rows.len());
        assert!(rows.chunks(4).all(|r| r.iter().all(|x| x.round_id == r[0].round_id && x.item_id == r[0].item_id)));
    }
}
