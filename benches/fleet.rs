//! `cargo bench --bench fleet`: how evenly one `ib-fetch` launches a round, and how soon it
//! starts the next, at 1,000 simulated providers and at 10 (issue 9, target 4).
//!
//! Each size is a generated fleet (`ib-sim generate-fleet --zero-latency`: every delay of every
//! profile is zero, so a round lasts as long as the client and the simulator take) served by
//! one `ib-sim` on port 0, and the real `ib-select`, `ib-schedule` and `ib-fetch` over the
//! bundled dataset: 1,000 providers × 120 rounds (past 100, so that p99 is not simply the
//! worst round), and 10 providers × 600 rounds (the reference benchmark's size). The figures come from the run's event log (definitions in
//! `crates/testkit/src/fleet_run.rs`): launch skew per round (latest minus earliest send), and the gap
//! between rounds (the next round's first send minus the previous round's last terminal
//! outcome); nearest-rank percentiles; and `ib-fetch`'s peak RSS as its `segment_closed`
//! records it (the fetch, before the seal). The run prints a Markdown table.
//!
//! `IB_FLEET_SIZES=1000x120,10x600` (providers × rounds, rounds a multiple of 3) changes the sizes.
use inferbench_testkit::fleet_run::{ms, percentile, run_fleet, Bins};
use std::path::Path;

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let sizes = std::env::var("IB_FLEET_SIZES").unwrap_or_else(|_| "1000x120,10x600".to_string());
    let sizes: Vec<(usize, usize)> = sizes
        .split(',')
        .map(|s| {
            let (p, r) = s.split_once('x').expect("IB_FLEET_SIZES: PROVIDERSxROUNDS,…");
            let rounds: usize = r.trim().parse().expect("rounds");
            assert!(
                rounds.is_multiple_of(3) && rounds > 0,
                "rounds: a positive multiple of 3 (one item per family each)"
            );
            (p.trim().parse().expect("providers"), rounds)
        })
        .collect();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bins = Bins {
        sim: env!("CARGO_BIN_EXE_ib-sim").into(),
        select: env!("CARGO_BIN_EXE_ib-select").into(),
        schedule: env!("CARGO_BIN_EXE_ib-schedule").into(),
        fetch: env!("CARGO_BIN_EXE_ib-fetch").into(),
    };
    let dataset = repo.join("data/micro-single-task");
    let mut rows = Vec::new();
    for (providers, rounds) in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = run_fleet(&bins, repo, dir.path(), &dataset, providers, rounds / 3, true);
        let f = &run.figures;
        assert_eq!(f.unterminated, 0, "every request reached a terminal outcome");
        assert_eq!(f.skews_ns, f.send_spreads_ns, "round_closed records the spread of the sends");
        // Flat in run size: the first and the last third of the gaps side by side.
        let third = f.gaps_ns.len() / 3;
        let (early, late) = (&f.gaps_ns[..third], &f.gaps_ns[f.gaps_ns.len() - third..]);
        rows.push(format!(
            "| {} | {} | {} | {} | {:.2} | {} | {} | {} | {} / {} | {} | {} | {} | {} |",
            run.providers,
            f.rounds,
            f.requests,
            f.completed,
            run.fetch_wall.as_secs_f64(),
            ms(percentile(&f.gaps_ns, 50)),
            ms(percentile(&f.gaps_ns, 99)),
            ms(f.gaps_ns.iter().copied().max().unwrap_or(0)),
            ms(percentile(early, 50)),
            ms(percentile(late, 50)),
            ms(percentile(&f.skews_ns, 50)),
            ms(percentile(&f.skews_ns, 99)),
            ms(f.skews_ns.iter().copied().max().unwrap_or(0)),
            f.peak_rss_bytes.map_or("—".to_string(), |b| (b >> 20).to_string()),
        ));
    }
    println!(
        "| providers | rounds | requests | completed | fetch wall (s) | gap p50 (ms) | gap p99 (ms) | gap max (ms) | \
         gap p50 first / last third (ms) | skew p50 (ms) | skew p99 (ms) | skew max (ms) | fetch peak RSS (MiB) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for row in rows {
        println!("{row}");
    }
}
