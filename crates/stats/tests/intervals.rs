//! The interval rules against an independent implementation (`intervals.py`, exact rational
//! binomial sums in Python), and their coverage by simulation.
use inferbench_contract::metrics::{E2E_LATENCY, OUTPUT_TOKENS_PER_SECOND};
use inferbench_stats::interval::{quantile_ranks, wilson, QuantileInterval};
use inferbench_stats::percentile::Samples;
use std::io::Write;
use std::process::{Command, Stdio};

/// Every level a published figure uses: upper p50/p95/p99 and the speed floors' lower
/// p5/p1, with the ranks `percentile` gives them.
fn cases(n: u64) -> Vec<(u64, u64, u64)> {
    let upper = |k: u64| (k * n).div_ceil(100).max(1);
    vec![
        (n, 50, upper(50)),
        (n, 95, upper(95)),
        (n, 99, upper(99)),
        (n, 5, n - upper(95) + 1),
        (n, 1, n - upper(99) + 1),
    ]
}

#[test]
fn intervals_match_an_independent_python_implementation() {
    let sizes: Vec<u64> = (1..=70).chain([99, 100, 101, 298, 299, 300, 600, 601]).collect();
    let percentiles: Vec<(u64, u64, u64)> = sizes.iter().flat_map(|&n| cases(n)).collect();
    let rates: Vec<(u64, u64)> =
        [(0, 1), (1, 1), (0, 18), (17, 18), (9, 18), (570, 600), (594, 600), (1, 6000), (5999, 6000)].into();
    let input = serde_json::json!({ "percentiles": percentiles, "rates": rates }).to_string();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/intervals.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the independent implementation");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "intervals.py failed");
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    for (case, expected) in percentiles.iter().zip(answer["percentiles"].as_array().unwrap()) {
        let (n, percent, rank) = *case;
        let got = match quantile_ranks(n, percent as f64 / 100.0, rank) {
            QuantileInterval::Interval(i) => serde_json::json!([i.lower_rank, i.upper_rank]),
            QuantileInterval::TooFewSamples { .. } => serde_json::Value::Null,
        };
        assert_eq!(&got, expected, "n = {n}, p{percent}, rank {rank}");
    }
    for ((successes, trials), expected) in rates.iter().zip(answer["rates"].as_array().unwrap()) {
        let (lo, hi) = wilson(*successes, *trials).unwrap();
        let (elo, ehi) = (expected[0].as_f64().unwrap(), expected[1].as_f64().unwrap());
        assert!((lo - elo).abs() < 1e-12 && (hi - ehi).abs() < 1e-12, "{successes}/{trials}: {lo} {hi} vs {expected}");
    }
}

/// SplitMix64, written out here so the simulation does not share the code it checks.
struct Rng(u64);
impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Across seeded synthetic samples of a known distribution (exponential, mean 100 ms: the
/// q-quantile is −100·ln(1 − q)), the reported interval covers the true quantile at least 95 %
/// of the time, within Monte Carlo error (three standard errors of a 95 % share).
#[test]
fn the_intervals_cover_the_true_quantile_at_least_95_percent_of_the_time() {
    const TRIALS: usize = 2_000;
    let quantile = |q: f64| -100.0 * (1.0 - q).ln();
    let slack = 3.0 * (0.95f64 * 0.05 / TRIALS as f64).sqrt();
    let mut rng = Rng(25);
    for n in [6usize, 20, 60, 120, 300, 600] {
        // (column, the population quantile it estimates)
        let columns = [
            (E2E_LATENCY.at(50), quantile(0.50)),
            (E2E_LATENCY.at(95), quantile(0.95)),
            (E2E_LATENCY.at(99), quantile(0.99)),
            (OUTPUT_TOKENS_PER_SECOND.at(95), quantile(0.05)),
            (OUTPUT_TOKENS_PER_SECOND.at(99), quantile(0.01)),
        ];
        let mut covered = [0usize; 5];
        let mut with_interval = [0usize; 5];
        for _ in 0..TRIALS {
            let samples = Samples::new((0..n).map(|_| quantile(rng.uniform())));
            for (i, (column, truth)) in columns.iter().enumerate() {
                let estimate = samples.column_with_interval(*column).unwrap();
                if let Ok(b) = estimate.interval {
                    with_interval[i] += 1;
                    covered[i] += usize::from(b.lower <= *truth && *truth <= b.upper);
                }
            }
        }
        for (i, (column, _)) in columns.iter().enumerate() {
            if with_interval[i] == 0 {
                continue;
            }
            assert_eq!(with_interval[i], TRIALS, "an interval exists for every sample of a size or none");
            let share = covered[i] as f64 / TRIALS as f64;
            assert!(share >= 0.95 - slack, "{column} of {n}: covered {share}");
        }
    }
}
