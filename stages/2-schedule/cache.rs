//! Round nonces (`inference.cache_busting`) and the prompt-cache probe's rounds
//! (`inference.cache_probe`).
//!
//! A nonce is 16 lower-case hex digits (64 bits) from the operating system's random source,
//! one per round, written into every provider's row of the round; `ib-fetch` sends it as the
//! first line of the request's first message. It cannot come from the lock: two runs of one
//! spec and dataset (a run directory removed and made again under its name) have the same
//! lock, and they must not send the same prompts. So with nonces the schedule is the one
//! output of `ib-schedule` that is not a function of the lock; once the fetch has begun it is
//! part of the record (the log names its hash), and the log holds every body as sent.
//!
//! The probe appends `rounds` pairs of rounds after the run's own: pair k sends the item of
//! the run's round k (family and item), first as round `N + 2k`, then again as round
//! `N + 2k + 1`, both with one nonce of their own, drawn whether or not `cache_busting` is on:
//! the first send of a probe is then a prompt no provider has been sent before (nothing of the
//! run's rounds, nor of an earlier run, is a prefix of it), and the repeat the same bytes, sent
//! once every provider's first send has ended. Appended last, the probe warms no cache any
//! round of the run is measured against.
use crate::rounds::short_hash;
use anyhow::{bail, Context, Result};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::CacheProbeSend;
use inferbench_inputs::spec::{CacheSettings, CACHE_PROBE_KEY};
use std::io::Read;

/// Bytes of randomness in one nonce.
const NONCE_BYTES: usize = 8;

/// What [`apply`] added, for the stage's summary line.
#[derive(Debug, Default, PartialEq)]
pub struct Added {
    pub nonced_rounds: usize,
    pub probe_rounds: usize,
}

/// Stamps a nonce on every round of `rows` when `cache.busting`, and appends the probe's
/// rounds when `cache.probe_rounds` is set. `rows` are in round order.
pub fn apply(cache: &CacheSettings, version: &str, rows: &mut Vec<ScheduleRow>, providers: &[String]) -> Result<Added> {
    // Counted as runs of one round_index: a load schedule numbers its arrivals step by step.
    let run_rounds = rows.chunk_by(|a, b| a.round_index == b.round_index).count();
    let probes = cache.probe_rounds.unwrap_or(0) as usize;
    if probes > run_rounds {
        bail!(
            "{CACHE_PROBE_KEY}.rounds: {probes} probe rounds, but the run has {run_rounds} rounds: each probe \
             round sends one of the run's items, so at most {run_rounds}"
        );
    }
    let busted = if cache.busting { run_rounds } else { 0 };
    let mut nonces = draw_nonces(busted + probes)?.into_iter();
    if cache.busting {
        stamp(rows, &mut nonces);
    }
    let probe = probe_rounds(version, rows, probes, providers, &mut nonces);
    rows.extend(probe);
    Ok(Added { nonced_rounds: busted, probe_rounds: probes })
}

/// `count` nonces from the operating system's random source.
fn draw_nonces(count: usize) -> Result<Vec<String>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut bytes = vec![0u8; count * NONCE_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for the rounds' nonces")?;
    Ok(bytes.chunks(NONCE_BYTES).map(|b| b.iter().map(|x| format!("{x:02x}")).collect()).collect())
}

/// One nonce per round, the same in every row of the round.
fn stamp(rows: &mut [ScheduleRow], nonces: &mut impl Iterator<Item = String>) {
    for round in rows.chunk_by_mut(|a, b| a.round_index == b.round_index) {
        let nonce = nonces.next().expect("one nonce drawn per round");
        for row in round {
            row.nonce = Some(nonce.clone());
        }
    }
}

/// The probe's `count` pairs of rounds after the run's `rows`, each pair with its nonce.
fn probe_rounds(
    version: &str,
    rows: &[ScheduleRow],
    count: usize,
    providers: &[String],
    nonces: &mut impl Iterator<Item = String>,
) -> Vec<ScheduleRow> {
    let run_rounds = rows.last().map_or(0, |r| r.round_index as usize + 1);
    let mut out = Vec::with_capacity(count * 2 * providers.len());
    for (k, round) in rows.chunk_by(|a, b| a.round_index == b.round_index).take(count).enumerate() {
        let (family, item_id) = (round[0].task_family, &round[0].item_id);
        let nonce = nonces.next().expect("one nonce drawn per probe round");
        for (send, offset) in [(CacheProbeSend::First, 0), (CacheProbeSend::Repeat, 1)] {
            let round_index = run_rounds + 2 * k + offset;
            let index = round_index.to_string();
            // The ids of a probe round name the probe, so none can equal an id of the run's.
            let parts = [version, &index, family.as_str(), item_id, "cache-probe", send.as_str()];
            let round_id = short_hash("round", &parts);
            let request_id = |provider: &str| {
                let mut request_parts = parts.to_vec();
                request_parts.insert(1, provider);
                short_hash("req", &request_parts)
            };
            let rows = crate::rounds::round_rows(round_index, &round_id, family, item_id, providers, request_id);
            out.extend(rows.map(|row| ScheduleRow { nonce: Some(nonce.clone()), cache_probe: Some(send), ..row }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::vocab::TaskFamily;

    const VERSION: &str = "micro-single-task-paired-round-robin-sha256-v1";

    fn run_rows(providers: &[String]) -> Vec<ScheduleRow> {
        let families = vec![
            (TaskFamily::MeetingNotesLookup, vec!["m1".to_string(), "m2".to_string()]),
            (TaskFamily::TicketTriage, vec!["t1".to_string(), "t2".to_string()]),
            (TaskFamily::ContractTermsExtraction, vec!["c1".to_string(), "c2".to_string()]),
        ];
        crate::rounds::build(VERSION, &families, providers)
    }

    fn providers() -> Vec<String> {
        ["a", "b", "c"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn without_either_setting_the_schedule_is_untouched() {
        let mut rows = run_rows(&providers());
        let before = rows.clone();
        let added = apply(&CacheSettings::default(), VERSION, &mut rows, &providers()).unwrap();
        assert_eq!(added, Added::default());
        assert_eq!(rows, before);
    }

    #[test]
    fn every_round_gets_one_nonce_shared_by_its_providers_and_new_in_every_schedule() {
        let busting = CacheSettings { busting: true, probe_rounds: None };
        let mut first = run_rows(&providers());
        apply(&busting, VERSION, &mut first, &providers()).unwrap();
        let mut second = run_rows(&providers());
        apply(&busting, VERSION, &mut second, &providers()).unwrap();
        let nonces = |rows: &[ScheduleRow]| -> Vec<String> {
            rows.chunk_by(|a, b| a.round_index == b.round_index)
                .map(|round| {
                    assert!(round.iter().all(|r| r.nonce == round[0].nonce), "one nonce per round");
                    round[0].nonce.clone().unwrap()
                })
                .collect()
        };
        let (a, b) = (nonces(&first), nonces(&second));
        assert_eq!(a.len(), 6);
        assert!(a.iter().all(|n| n.len() == 16 && n.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())));
        assert_eq!(a.iter().collect::<std::collections::HashSet<_>>().len(), 6, "a nonce per round: {a:?}");
        assert!(a.iter().zip(&b).all(|(x, y)| x != y), "drawn afresh: {a:?} {b:?}");
    }

    #[test]
    fn the_probe_sends_the_first_rounds_items_twice_after_the_run_with_one_nonce_per_pair() {
        let probe = CacheSettings { busting: false, probe_rounds: Some(2) };
        let mut rows = run_rows(&providers());
        let added = apply(&probe, VERSION, &mut rows, &providers()).unwrap();
        assert_eq!(added, Added { nonced_rounds: 0, probe_rounds: 2 });
        assert_eq!(rows.len(), (6 + 4) * 3);
        assert!(
            rows[..18].iter().all(|r| r.nonce.is_none() && r.cache_probe.is_none()),
            "the run's rounds as they were"
        );
        let probe_rows = &rows[18..];
        let rounds: Vec<&[ScheduleRow]> = probe_rows.chunk_by(|a, b| a.round_index == b.round_index).collect();
        assert_eq!(rounds.iter().map(|r| r[0].round_index).collect::<Vec<_>>(), [6, 7, 8, 9]);
        let sends: Vec<_> = rounds.iter().map(|r| r[0].cache_probe.unwrap()).collect();
        use CacheProbeSend::{First, Repeat};
        assert_eq!(sends, [First, Repeat, First, Repeat]);
        let items: Vec<&str> = rounds.iter().map(|r| r[0].item_id.as_str()).collect();
        assert_eq!(items, ["m1", "m1", "t1", "t1"]);
        assert_eq!(rounds[0][0].nonce, rounds[1][0].nonce, "the repeat is the same bytes");
        assert_ne!(rounds[0][0].nonce, rounds[2][0].nonce, "each pair its own nonce");
        let ids: std::collections::HashSet<&str> = rows.iter().map(|r| r.request_id.as_str()).collect();
        assert_eq!(ids.len(), rows.len(), "every request id distinct");
    }

    #[test]
    fn more_probe_rounds_than_the_run_has_are_refused() {
        let probe = CacheSettings { busting: false, probe_rounds: Some(7) };
        let err = apply(&probe, VERSION, &mut run_rows(&providers()), &providers()).unwrap_err();
        assert!(err.to_string().contains("7 probe rounds, but the run has 6 rounds"), "{err}");
    }
}
