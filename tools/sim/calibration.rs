//! Monte Carlo check that the default profiles reproduce the published leaderboard.
//!
//! It runs the simulator's own draw and stream-planning code for a full run (600 rounds per
//! provider, families cycling meeting/ticket/contract as the reference schedules them),
//! applies what the client does (20 s deadline over the whole exchange, failures out of the
//! latency populations, speed = (N - 1) / (t_last - t_first)), and computes the figures with
//! the percentile ranks of DESIGN.md. Answers are synthetic but shaped like the dataset's
//! (short meeting values, two-enum tickets, ten-field contracts), tokenized with o200k_base.
//!
//! `cargo test --bin ib-sim calibration -- --nocapture` prints the table.
use crate::draw::Drawer;
use crate::profile::{Fault, Profile, Profiles, Sampling};
use crate::schedule::{schedule, Kind};
use inferbench_judge::tokenizer;
use inferbench_sim::answer::{render, tokenize, Chunks};
use inferbench_sim::dataset::Gold;
use inferbench_stats::rng::SplitMix64;
use serde_json::{Map, Value};
use std::path::Path;

pub const DEFAULT_PROFILES: &str = include_str!("../../pipelines/micro-single-task/sim-profiles.yaml");
const TIMEOUT_MS: f64 = 20_000.0;
const ROUNDS: usize = 600;

/// The published figures: seed-runner-readme.txt's table, plus TTFT p95 and the tokens/s p99
/// floor from seed-leaderboard-page.txt.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    pub ttfa_p50: f64,
    pub e2e_p50: f64,
    pub e2e_p99: f64,
    pub tps_p50: f64,
    pub tps_p95: f64,
    pub success: f64,
    pub failures: f64,
    pub ttfa_p95: f64,
    pub tps_p99: f64,
}

pub const PUBLISHED: [(&str, Figures); 10] = [
    ("baseten", fig(287.1, 330.8, 3228.8, 240.5, 61.6, 95.83, 0.00, 1160.0, 22.6)),
    ("deepinfra", fig(1151.7, 1826.9, 17070.7, 69.4, 9.0, 95.50, 4.00, 6410.0, 5.0)),
    ("fireworks", fig(1061.1, 1954.2, 10487.6, 58.2, 27.9, 99.50, 0.00, 5830.0, 14.9)),
    ("modal", fig(470.0, 574.1, 3278.9, 222.2, 84.7, 99.33, 0.00, 1090.0, 34.9)),
    ("nebius", fig(1144.3, 1450.7, 14970.4, 269.3, 78.8, 84.83, 14.83, 7110.0, 39.9)),
    ("novita", fig(1404.7, 1738.3, 7248.3, 60.6, 29.6, 94.17, 4.00, 3410.0, 11.6)),
    ("parasail", fig(1108.9, 1590.8, 11512.3, 52.4, 22.8, 98.33, 1.33, 5540.0, 15.6)),
    ("telnyx", fig(573.5, 669.4, 3478.4, 184.3, 67.5, 99.50, 0.00, 1340.0, 47.3)),
    ("together", fig(393.2, 608.6, 12449.7, 151.6, 34.0, 98.50, 1.00, 2260.0, 21.7)),
    ("z-ai", fig(1391.2, 1748.8, 8591.2, 56.3, 27.8, 97.50, 0.17, 3140.0, 11.5)),
];

#[allow(clippy::too_many_arguments)]
const fn fig(
    ttfa_p50: f64,
    e2e_p50: f64,
    e2e_p99: f64,
    tps_p50: f64,
    tps_p95: f64,
    success: f64,
    failures: f64,
    ttfa_p95: f64,
    tps_p99: f64,
) -> Figures {
    Figures { ttfa_p50, e2e_p50, e2e_p99, tps_p50, tps_p95, success, failures, ttfa_p95, tps_p99 }
}

/// What the client would record for one request.
#[derive(Debug, Default, Clone, Copy)]
struct Observed {
    ttfa: Option<f64>,
    e2e: Option<f64>,
    tps: Option<f64>,
    failed: bool,
    success: bool,
}

/// Synthetic gold answers: `ROUNDS / 3` per family, deterministic.
pub fn synthetic_answers() -> [Vec<String>; 3] {
    let mut rng = SplitMix64::new(2026);
    let n = ROUNDS / 3;
    let first = ["Priya", "Tomas", "Amara", "Jonah", "Mei-Lin", "Daniel", "Sofia", "Kwame", "Elena", "Ravi"];
    let last = ["Raman", "Lindqvist", "Okafor", "Whitfield", "Chen", "Moreau", "Alvarez", "Mensah", "Novak", "Iyer"];
    let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October"];
    let meeting = (0..n)
        .map(|i| {
            let value = match i % 3 {
                0 => format!("{} {}", first[rng.below_modulo(10)], last[rng.below_modulo(10)]),
                1 if rng.below_modulo(2) == 0 => {
                    format!("{} {}", months[rng.below_modulo(10)], 1 + rng.below_modulo(28))
                }
                1 => format!("2026-{:02}-{:02}", 1 + rng.below_modulo(12), 1 + rng.below_modulo(28)),
                _ => match rng.below_modulo(3) {
                    0 => format!("{}", 2 + rng.below_modulo(400)),
                    1 => format!("${},{:03}", 1 + rng.below_modulo(90), rng.below_modulo(1000)),
                    _ => format!("{}%", 1 + rng.below_modulo(60)),
                },
            };
            render(&Gold::Meeting { value, kind: String::new() })
        })
        .collect();
    let ticket = (0..n)
        .map(|_| {
            let category = inferbench_sim::dataset::CATEGORIES[rng.below_modulo(4)].to_string();
            let priority = inferbench_sim::dataset::PRIORITIES[rng.below_modulo(4)].to_string();
            render(&Gold::Ticket { category, priority })
        })
        .collect();
    let contract = (0..n)
        .map(|_| {
            let mut m = Map::new();
            let int_or_null = |rng: &mut SplitMix64, options: &[i64]| {
                if rng.below_modulo(4) == 0 {
                    Value::Null
                } else {
                    Value::from(options[rng.below_modulo(options.len())])
                }
            };
            m.insert("agreement_type".into(), inferbench_sim::dataset::AGREEMENT_TYPES[rng.below_modulo(4)].into());
            let y = 2023 + rng.below_modulo(4);
            m.insert(
                "effective_date".into(),
                format!("{y}-{:02}-{:02}", 1 + rng.below_modulo(12), 1 + rng.below_modulo(28)).into(),
            );
            m.insert(
                "initial_term_end_date".into(),
                format!(
                    "{}-{:02}-{:02}",
                    y + 1 + rng.below_modulo(3),
                    1 + rng.below_modulo(12),
                    1 + rng.below_modulo(28)
                )
                .into(),
            );
            let renews = rng.below_modulo(2) == 0;
            m.insert("auto_renews".into(), renews.into());
            m.insert(
                "renewal_term_months".into(),
                if renews { int_or_null(&mut rng, &[12, 24, 36]) } else { Value::Null },
            );
            m.insert("non_renewal_notice_days".into(), int_or_null(&mut rng, &[30, 60, 90]));
            m.insert("payment_terms_days".into(), int_or_null(&mut rng, &[15, 30, 45, 60]));
            let tfc = rng.below_modulo(2) == 0;
            m.insert("termination_for_convenience".into(), tfc.into());
            m.insert(
                "termination_notice_days".into(),
                if tfc { int_or_null(&mut rng, &[30, 60, 90]) } else { Value::Null },
            );
            m.insert("security_incident_notice_hours".into(), int_or_null(&mut rng, &[24, 48, 72]));
            render(&Gold::Contract(m))
        })
        .collect();
    [meeting, ticket, contract]
}

/// One full run of one provider, from request counter `start`.
fn tokenized(answers: &[Vec<String>; 3], tokens_per_chunk: usize) -> Vec<Vec<Chunks>> {
    answers.iter().map(|family| family.iter().map(|a| tokenize(a, tokens_per_chunk)).collect()).collect()
}

fn simulate(profile: &Profile, drawer: &Drawer, answers: &[Vec<Chunks>], start: u64) -> Vec<Observed> {
    (0..ROUNDS)
        .map(|round| {
            let answer = &answers[round % 3][round / 3];
            let counter = start + round as u64;
            let body = sha2_of(&format!("{}:{round}", profile.slug));
            let draw = drawer.draw(profile, &body, counter);
            // Responses with no stream to time (none of the default profiles has the last
            // three; they fail a request all the same).
            if matches!(draw.fault, Fault::Http429 | Fault::Http5xx | Fault::Http400 | Fault::Redirect | Fault::NonSse)
            {
                return Observed { failed: true, ..Observed::default() };
            }
            let ends: Vec<usize> = answer.chunks.iter().map(|(_, end)| *end).collect();
            // The client stops reading at the deadline or at the first invalid event. Usage
            // chunks do not move any figure.
            let sched = schedule(profile, &draw, 0, &ends, false);
            let mut seen: Vec<f64> = Vec::new();
            let mut broken = sched.headers_at_ms >= TIMEOUT_MS;
            for s in sched.slots {
                if broken || s.at_ms >= TIMEOUT_MS {
                    broken = true;
                    break;
                }
                match s.kind {
                    Kind::Answer => seen.push(s.at_ms),
                    Kind::Malformed | Kind::Abort | Kind::Error | Kind::End | Kind::Unterminated | Kind::Oversized => {
                        broken = true
                    }
                    _ => {}
                }
            }
            let ttfa = seen.first().copied();
            if broken {
                return Observed { ttfa, failed: true, ..Observed::default() };
            }
            let (first, last) = (seen[0], *seen.last().unwrap());
            let n = answer.token_count as f64;
            let tps = (n >= 2.0 && last > first).then(|| (n - 1.0) / ((last - first) / 1000.0));
            Observed { ttfa, e2e: Some(last), tps, failed: false, success: draw.correct }
        })
        .collect()
}

fn sha2_of(s: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(s.as_bytes()).into()
}

/// Upper-tail pK: the 1-based rank ceil(K·n/100) of the ascending samples.
fn upper(xs: &[f64], k: usize) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = (k * v.len()).div_ceil(100).max(1);
    v[rank - 1]
}

/// Lower-tail floor pK: the largest v with at least K% of samples >= v.
fn floor(xs: &[f64], k: usize) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = v.len() - (k * v.len()).div_ceil(100) + 1;
    v[rank - 1]
}

fn figures(obs: &[Observed]) -> Figures {
    let ttfa: Vec<f64> = obs.iter().filter_map(|o| o.ttfa).collect();
    let e2e: Vec<f64> = obs.iter().filter_map(|o| o.e2e).collect();
    let tps: Vec<f64> = obs.iter().filter_map(|o| o.tps).collect();
    let pct = |f: &dyn Fn(&Observed) -> bool| 100.0 * obs.iter().filter(|o| f(o)).count() as f64 / obs.len() as f64;
    Figures {
        ttfa_p50: upper(&ttfa, 50),
        e2e_p50: upper(&e2e, 50),
        e2e_p99: upper(&e2e, 99),
        tps_p50: upper(&tps, 50),
        tps_p95: floor(&tps, 95),
        success: pct(&|o| o.success && !o.failed),
        failures: pct(&|o| o.failed),
        ttfa_p95: upper(&ttfa, 95),
        tps_p99: floor(&tps, 99),
    }
}

/// The runs the figures are averaged over: (seed, first request counter). Counters 3 and 6
/// are where one or two smoke runs against the same simulator leave a provider.
pub const REALIZATIONS: [(u64, u64); 4] = [(0, 0), (1, 0), (2, 3), (3, 6)];

/// A provider's figures in each of [`REALIZATIONS`].
fn realizations(p: &Profile, sampling: Sampling, answers: &[Vec<Chunks>]) -> Vec<Figures> {
    REALIZATIONS
        .iter()
        .map(|&(seed, start)| figures(&simulate(p, &Drawer::new(seed, &p.slug, sampling), answers, start)))
        .collect()
}

fn mean(fs: &[Figures]) -> Figures {
    let m = |f: fn(&Figures) -> f64| fs.iter().map(f).sum::<f64>() / fs.len() as f64;
    Figures {
        ttfa_p50: m(|f| f.ttfa_p50),
        e2e_p50: m(|f| f.e2e_p50),
        e2e_p99: m(|f| f.e2e_p99),
        tps_p50: m(|f| f.tps_p50),
        tps_p95: m(|f| f.tps_p95),
        success: m(|f| f.success),
        failures: m(|f| f.failures),
        ttfa_p95: m(|f| f.ttfa_p95),
        tps_p99: m(|f| f.tps_p99),
    }
}

fn published(slug: &str) -> Figures {
    PUBLISHED.iter().find(|(s, _)| *s == slug).map(|(_, f)| *f).expect("a published row")
}

fn row(name: &str, f: &Figures) -> String {
    format!(
        "{name:<16}{:>8.1}{:>8.1}{:>9.1}{:>8.1}{:>7.1}{:>8.2}{:>7.2}{:>8.0}{:>7.1}",
        f.ttfa_p50, f.e2e_p50, f.e2e_p99, f.tps_p50, f.tps_p95, f.success, f.failures, f.ttfa_p95, f.tps_p99
    )
}

const HEADER: &str = "provider          TTFA50   E2E50    E2E99   tps50  tps95   succ%  fail%  TTFA95  tps99";

fn load_defaults() -> Profiles {
    Profiles::parse(DEFAULT_PROFILES, Path::new("pipelines/micro-single-task/sim-profiles.yaml")).unwrap()
}

/// The default profiles, simulated in every realization: what a full `make` run would show.
/// Fails if the mean over the realizations drifts from the published table (relative
/// tolerance on the latencies and speeds, absolute points on the rates). The table is printed
/// with `-- --nocapture`.
#[test]
fn default_profiles_reproduce_the_published_table() {
    let profiles = load_defaults();
    assert_eq!(profiles.providers.len(), 10);
    let answers = synthetic_answers();
    println!("{HEADER}");
    let mut problems = Vec::new();
    for p in profiles.providers.values() {
        let runs = realizations(p, profiles.sampling, &tokenized(&answers, p.tokens_per_chunk));
        let (got, want) = (mean(&runs), published(&p.slug));
        println!("{}", row(&format!("{} seed 0", p.slug), &runs[0]));
        println!("{}", row("  mean of 4", &got));
        println!("{}", row("  published", &want));
        let span = |f: fn(&Figures) -> f64| {
            let v: Vec<f64> = runs.iter().map(f).collect();
            format!(
                "{:.0}-{:.0}",
                v.iter().cloned().fold(f64::MAX, f64::min),
                v.iter().cloned().fold(f64::MIN, f64::max)
            )
        };
        println!(
            "  range: E2E p50 {}, E2E p99 {}, failures {}",
            span(|f| f.e2e_p50),
            span(|f| f.e2e_p99),
            span(|f| f.failures * 100.0)
        );
        let rel = |name: &str, g: f64, w: f64, tol: f64| {
            ((g / w - 1.0).abs() > tol).then(|| format!("{} {name}: simulated {g:.1}, published {w:.1}", p.slug))
        };
        let abs = |name: &str, g: f64, w: f64, tol: f64| {
            ((g - w).abs() > tol).then(|| format!("{} {name}: simulated {g:.2}%, published {w:.2}%", p.slug))
        };
        // Nebius's E2E p50 is 306 ms above its TTFA p50, about all that a contract answer
        // adds at 269 tokens/s; the median of a mix with two thirds short answers cannot get
        // that far (the best profile shape reaches about -6%).
        let e2e_p50_tol = if p.slug == "nebius" { 0.08 } else { 0.05 };
        problems.extend(
            [
                rel("TTFA p50", got.ttfa_p50, want.ttfa_p50, 0.05),
                rel("E2E p50", got.e2e_p50, want.e2e_p50, e2e_p50_tol),
                rel("E2E p99", got.e2e_p99, want.e2e_p99, 0.10),
                rel("tokens/s p50", got.tps_p50, want.tps_p50, 0.05),
                rel("tokens/s p95 floor", got.tps_p95, want.tps_p95, 0.10),
                abs("task success", got.success, want.success, 0.35),
                abs("operational failures", got.failures, want.failures, 0.25),
            ]
            .into_iter()
            .flatten(),
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The leaderboard's eligibility (success >= 95%, failures <= 1%) must come out as published
/// in every realization, not only on average: Together sits exactly at 1.00% failures and
/// Baseten at 95.83% success.
#[test]
fn eligibility_is_as_published_in_every_realization() {
    let profiles = load_defaults();
    let answers = synthetic_answers();
    let eligible = |f: &Figures| f.success >= 95.0 - 1e-9 && f.failures <= 1.0 + 1e-9;
    for p in profiles.providers.values() {
        let want = eligible(&published(&p.slug));
        for (run, (seed, start)) in
            realizations(p, profiles.sampling, &tokenized(&answers, p.tokens_per_chunk)).iter().zip(REALIZATIONS)
        {
            assert_eq!(eligible(run), want, "{} seed {seed} from counter {start}: {run:?}", p.slug);
        }
    }
}

/// Not a check: fits the shape parameters of each default profile to the published figures
/// (means over [`REALIZATIONS`]) and prints them, to be copied into the YAML. Coordinate
/// search, one figure per parameter:
/// - TTFT p99 -> E2E p99, on a grid (E2E p99 is not monotone in it: a tail pushed past the
///   20 s timeout turns completions into failures). Providers whose published failures are
///   all explicit faults get a p999 that keeps the tail inside the timeout.
/// - TTFT median -> TTFA p50; TTFT p75 -> E2E p50 (a grid; when even a flat body is too
///   slow, a p90 flat too, and then a speed p25 near the median).
/// - TTFT p95 -> TTFA p95 (the leaderboard page's "TTFT p95").
/// - The failure-causing faults, scaled together -> failure rate; accuracy -> task success.
///
/// Speed median, p05 and p01 are the published figures.
/// `cargo test --release --bin ib-sim fit_default_profiles -- --ignored --nocapture`
#[test]
#[ignore]
fn fit_default_profiles() {
    let profiles = load_defaults();
    let answers = synthetic_answers();
    for (i, fam) in answers.iter().enumerate() {
        let counts: Vec<usize> = fam.iter().map(|a| tokenizer::count(a)).collect();
        let mean = counts.iter().sum::<usize>() as f64 / counts.len() as f64;
        println!(
            "family {i}: tokens min {} mean {mean:.1} max {}",
            counts.iter().min().unwrap(),
            counts.iter().max().unwrap()
        );
    }
    let providers: Vec<&Profile> = profiles.providers.values().collect();
    // Two at a time: the machines have two cores.
    std::thread::scope(|scope| {
        let answers = &answers;
        let handles: Vec<_> = providers
            .chunks(providers.len().div_ceil(2))
            .map(|chunk| {
                scope.spawn(move || chunk.iter().map(|p| fit(p, profiles.sampling, answers)).collect::<Vec<_>>())
            })
            .collect();
        for h in handles {
            for line in h.join().unwrap() {
                println!("{line}");
            }
        }
    });
}

#[derive(Clone, Copy, Debug)]
struct Shape {
    m: f64,
    a: f64,
    p90: Option<f64>,
    b: f64,
    c: f64,
    p999: Option<f64>,
    r25: Option<f64>,
    scale: f64,
    acc: f64,
}

/// Providers whose published failures include timeouts of the latency tail itself.
const TAIL_TIMEOUTS: [&str; 2] = ["deepinfra", "nebius"];

fn fit(p0: &Profile, sampling: Sampling, answers: &[Vec<String>; 3]) -> String {
    use crate::profile::QuantileDist;
    let want = published(&p0.slug);
    let tok = tokenized(answers, p0.tokens_per_chunk);
    let base = p0.faults;
    let build = |x: &Shape| {
        let mut p = p0.clone();
        let mut ttft = vec![(0.5, x.m), (0.75, x.a), (0.95, x.b), (0.99, x.c)];
        ttft.extend(x.p90.map(|v| (0.9, v)));
        ttft.extend(x.p999.map(|v| (0.999, v)));
        p.ttft_ms = QuantileDist::new(&ttft);
        let mut rate = vec![(0.01, want.tps_p99), (0.05, want.tps_p95), (0.5, want.tps_p50)];
        rate.extend(x.r25.map(|v| (0.25, v)));
        p.tokens_per_second = QuantileDist::new(&rate);
        let f = &mut p.faults;
        f.http_429 = base.http_429 * x.scale;
        f.http_5xx = base.http_5xx * x.scale;
        f.stall_before = base.stall_before * x.scale;
        f.disconnect = base.disconnect * x.scale;
        f.malformed = base.malformed * x.scale;
        p.accuracy = x.acc.min(1.0);
        p
    };
    let runs = |x: &Shape| realizations(&build(x), sampling, &tok);
    let run = |x: &Shape| mean(&runs(x));
    // Bisection of a monotone figure; returns the end on the target's side.
    let bisect = |lo: f64, hi: f64, target: f64, rising: bool, eval: &dyn Fn(f64) -> f64| {
        let (mut lo, mut hi) = (lo, hi);
        for _ in 0..24 {
            let mid = (lo + hi) / 2.0;
            if (eval(mid) < target) == rising {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if rising {
            hi
        } else {
            lo
        }
    };
    let grid = |lo: f64, hi: f64, n: usize| (0..n).map(move |i| lo * (hi / lo).powf(i as f64 / (n - 1) as f64));
    let closest = |xs: Vec<Shape>, figure: fn(&Figures) -> f64, target: f64| {
        xs.into_iter()
            .map(|s| (s, figure(&run(&s))))
            .min_by(|(_, f), (_, g)| (f - target).abs().total_cmp(&(g - target).abs()))
            .unwrap()
    };
    let tail_timeouts = TAIL_TIMEOUTS.contains(&p0.slug.as_str());
    // Failures of the tail alone, in the worst realization.
    let natural = |x: &Shape| runs(&Shape { scale: 0.0, ..*x }).iter().map(|f| f.failures).fold(0.0, f64::max);
    let mut x = Shape {
        m: want.ttfa_p50,
        a: (want.ttfa_p50 * want.ttfa_p95).sqrt(),
        p90: None,
        b: want.ttfa_p95,
        c: want.e2e_p99,
        p999: None,
        r25: None,
        scale: 1.0,
        acc: (want.success / (100.0 - want.failures)).min(1.0),
    };
    // Timeouts the slow end of the speed distribution causes even with a short TTFT tail
    // (an 80-token contract at 3 tokens/s takes 27 s): the TTFT tail cannot remove them, so
    // they are allowed, up to the published failure rate.
    let budget_floor = natural(&Shape { c: x.b * 1.01, p999: Some(x.b * 1.02), ..x }).min(want.failures);
    for _ in 0..4 {
        // Timeouts of the latency tail may make up the published failures only where the
        // published tail reaches the timeout; elsewhere (slow-speed timeouts aside) the
        // faults are explicit.
        let budget = if tail_timeouts { want.failures } else { 0.0 };
        let candidates: Vec<Shape> = grid(x.b * 1.01, 40_000.0, 25)
            .map(|c| {
                let mut s = Shape { c, p999: None, ..x };
                if !tail_timeouts && natural(&s) > budget_floor {
                    // Keep the extreme tail inside the timeout: the largest p999 with no
                    // timeouts of its own.
                    let (mut lo, mut hi) = (c * 1.001, 40_000.0);
                    for _ in 0..12 {
                        let mid = (lo * hi).sqrt();
                        if natural(&Shape { p999: Some(mid), ..s }) > budget_floor {
                            hi = mid;
                        } else {
                            lo = mid;
                        }
                    }
                    s.p999 = Some(lo);
                }
                s
            })
            .filter(|s| natural(s) <= budget.max(budget_floor) + 0.01)
            .collect();
        if !candidates.is_empty() {
            x = closest(candidates, |f| f.e2e_p99, want.e2e_p99).0;
        }
        x.m = bisect(want.ttfa_p50 * 0.7, want.ttfa_p50 * 1.3, want.ttfa_p50, true, &|m| {
            run(&Shape { m, a: x.a.max(m * 1.001), ..x }).ttfa_p50
        });
        // The narrowest body among the near-best: where E2E p50 cannot reach the target,
        // many widths come equally close, and a wide p75 would drag p95 up with it.
        let scored: Vec<(Shape, f64)> = grid(x.m * 1.001, x.b * 0.999, 30)
            .map(|a| Shape { a, p90: None, r25: None, ..x })
            .map(|s| (s, run(&s).e2e_p50))
            .collect();
        let best_gap = scored.iter().map(|(_, e)| (e - want.e2e_p50).abs()).fold(f64::MAX, f64::min);
        let (best, e2e) =
            *scored.iter().find(|(_, e)| (e - want.e2e_p50).abs() <= best_gap + 0.005 * want.e2e_p50).unwrap();
        let flat_to_p90 = Shape { a: x.m * 1.001, p90: Some(x.m * 1.002), r25: None, ..x };
        if e2e <= want.e2e_p50 * 1.01 {
            x = best;
        } else if run(&flat_to_p90).e2e_p50 <= want.e2e_p50 {
            x = flat_to_p90;
            x.p90 = Some(bisect(x.a * 1.001, x.b * 0.999, want.e2e_p50, true, &|v| {
                run(&Shape { p90: Some(v), ..x }).e2e_p50
            }));
        } else {
            x = flat_to_p90;
            let lognormal_p25 = want.tps_p50 * (want.tps_p95 / want.tps_p50).powf(0.674_49 / 1.644_85);
            x.r25 = Some(bisect(lognormal_p25, want.tps_p50 * 0.999, want.e2e_p50, false, &|v| {
                run(&Shape { r25: Some(v), ..x }).e2e_p50
            }));
        }
        x.b = bisect(x.p90.unwrap_or(x.a) * 1.001, x.c * 0.999, want.ttfa_p95, true, &|b| {
            run(&Shape { b, ..x }).ttfa_p95
        });
        if base.total() > 0.0 {
            x.scale = bisect(0.0, 3.0, want.failures - 0.05, true, &|scale| run(&Shape { scale, ..x }).failures);
        }
        x.acc = bisect(0.5, 1.0, want.success - 0.05, true, &|acc| run(&Shape { acc, ..x }).success);
    }
    let got = run(&x);
    let f = build(&x).faults;
    let r1 = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or("-".into());
    format!(
        "{}: ttft_ms median {:.1} p75 {:.1} p90 {} p95 {:.1} p99 {:.1} p999 {} | tps p25 {} | accuracy {:.5} | 429 {:.5} 5xx {:.5} stall_before {:.5} disconnect {:.5} malformed {:.5}\n{}\n{}",
        p0.slug, x.m, x.a, r1(x.p90), x.b, x.c, r1(x.p999), r1(x.r25), x.acc, f.http_429, f.http_5xx, f.stall_before, f.disconnect, f.malformed,
        row("  mean of 4", &got),
        row("  published", &want)
    )
}

/// The default profiles honour `include_usage`, so a simulated run gets a usage chunk from
/// exactly the providers whose table entry asks for one, as the real providers would; and
/// every provider of the table has a profile under its slug.
#[test]
fn default_profiles_answer_the_usage_the_provider_table_asks_for() {
    use inferbench_inputs::providers::{slug, ProviderTable};
    use inferbench_inputs::spec::Spec;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = Spec::load(&repo.join("pipelines/micro-single-task/spec.yaml")).unwrap();
    let table = ProviderTable::load(&spec.providers_path, &spec).unwrap();
    let profiles = load_defaults();
    assert_eq!(profiles.providers.len(), table.providers.len());
    for p in &table.providers {
        let profile = profiles.providers.get(&slug(&p.name)).unwrap_or_else(|| panic!("no profile for {}", p.name));
        assert_eq!(profile.usage_chunk.sends(p.stream_usage), p.stream_usage, "{}", p.name);
        assert_eq!(profile.usage_chunk.sends(!p.stream_usage), !p.stream_usage, "{}", p.name);
    }
}
