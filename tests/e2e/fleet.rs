//! One `ib-fetch` against a generated fleet of 150 simulated providers (`ib-sim
//! generate-fleet`, one `ib-sim` process): every request of every round completes, each round
//! records its launch skew as the spread of its recorded send times, every send is at or after
//! its round's release, and the gap between rounds is recorded. The timing bands are sanity
//! bounds that hold on a loaded 2-core machine; `make bench` (benches/fleet.rs) measures.
use crate::support::{bin, repo, timed_section};
use inferbench_contract::event::Event;
use inferbench_testkit::fleet_run::{ms, percentile, read_log, run_fleet, Bins};
use std::collections::BTreeMap;

const PROVIDERS: usize = 150;
const PER_FAMILY: usize = 2;

#[test]
fn fetch_drives_a_fleet_of_150_simulated_providers_round_by_round() {
    let _turn = timed_section();
    let dir = tempfile::tempdir().unwrap();
    let bins =
        Bins { sim: bin("ib-sim"), select: bin("ib-select"), schedule: bin("ib-schedule"), fetch: bin("ib-fetch") };
    let dataset = repo().join("data/micro-single-task");
    let run = run_fleet(&bins, &repo(), dir.path(), &dataset, PROVIDERS, PER_FAMILY, true);
    let f = &run.figures;
    let rounds = 3 * PER_FAMILY;
    assert_eq!((f.rounds, f.requests), (rounds, rounds * PROVIDERS));
    assert_eq!((f.completed, f.unterminated), (f.requests, 0), "every request completed");
    assert_eq!(f.released, vec![PROVIDERS; rounds], "each round released every provider at once");
    assert_eq!(f.skews_ns, f.send_spreads_ns, "round_closed's skew is the spread of the recorded sends");
    assert_eq!(f.gaps_ns.len(), rounds - 1);

    // Every send is at or after its round's release, which is what request_started says it
    // was released at; and each request's line precedes everything else of it in the log.
    let log = read_log(&run.run);
    let mut released: BTreeMap<u64, u64> = BTreeMap::new();
    let mut started: BTreeMap<String, u64> = BTreeMap::new();
    for env in &log {
        match &env.event {
            Event::RoundReleased(r) => {
                released.insert(r.round_index, env.t_ns);
            }
            Event::RequestStarted(s) => {
                assert_eq!(Some(&s.intended_t_ns), released.get(&s.round_index), "{}", s.request_id);
                assert!(env.t_ns >= s.intended_t_ns, "{}: sent before its release", s.request_id);
                started.insert(s.request_id.clone(), env.seq);
            }
            Event::ResponseHead(h) => assert!(started.contains_key(&h.request_id), "{}", h.request_id),
            _ => {}
        }
    }

    // Sanity bands only: a launch of 150 requests is a loop of microseconds each, and between
    // two rounds the client only closes one and releases the next; a loaded machine may stall
    // either by tens of milliseconds, never by a second.
    let (skew_max, gap_max) = (*f.skews_ns.iter().max().unwrap(), *f.gaps_ns.iter().max().unwrap());
    eprintln!(
        "fleet of {}: fetch {:.2} s; skew p50 {} max {} ms, gap p50 {} max {} ms",
        run.providers,
        run.fetch_wall.as_secs_f64(),
        ms(percentile(&f.skews_ns, 50)),
        ms(skew_max),
        ms(percentile(&f.gaps_ns, 50)),
        ms(gap_max)
    );
    assert!(skew_max < 500_000_000, "launch skew {} ms", ms(skew_max));
    assert!(gap_max < 1_000_000_000, "gap between rounds {} ms", ms(gap_max));
}
