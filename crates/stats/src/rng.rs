//! The one seeded generator every tool draws from, a string's stream key, and the normal
//! quantile function.
//!
//! [`SplitMix64`] is written here rather than taken from a crate, so that the bytes promised
//! for a seed can never change under a dependency upgrade: `ib-data`'s dataset (its SHA-256s
//! are recorded in `data/README.md`), `ib-schedule`'s arrivals and synthetic prompts, `ib-sim`'s
//! answers and timings and `ib-synth`'s logs are functions of its sequence, and so are the
//! bootstrap's intervals. Each user derives its own streams from its seed: `ib-data` one
//! per (seed, family, index, attempt) with [`SplitMix64::derive`], `ib-sim` one per request
//! (`tools/sim/draw.rs`) and per provider (`tools/sim/stratified.rs`).

/// SplitMix64 (Steele, Lea, Flood 2014): full period, passes BigCrush, a dozen lines.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

/// FNV-1a of a string: turns a name (a family, a request id) into a stream key without a
/// hashing crate.
pub fn key(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// An independent stream for one purpose: each part is folded in through a full
    /// SplitMix64 step, so nearby inputs (index 7 and 8) give unrelated streams.
    pub fn derive(seed: u64, parts: &[u64]) -> Self {
        let mut state = SplitMix64(seed);
        for part in parts {
            let mixed = state.next_u64() ^ part;
            state = SplitMix64(mixed);
            state.next_u64();
        }
        state
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in the open interval (0, 1): never exactly 0 or 1, so quantile functions
    /// stay finite.
    pub fn next_f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (`n > 0`), by rejection, so no value is favoured.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0)");
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let r = self.next_u64();
            if r < zone {
                return (r % n) as usize;
            }
        }
    }

    /// An integer in `0..n` (`n > 0`) from exactly one draw, by its remainder: the simulator's
    /// and `ib-synth`'s choices, whose recorded sequences rest on it. The modulo bias (below
    /// `n / 2^64`) is negligible for the small `n` used there.
    pub fn below_modulo(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// An index in `0..n` from exactly one draw, by multiply-shift (Lemire, without rejection:
    /// its bias is below `n / 2^64`): `ib-compare`'s bootstrap resamples, whose method its
    /// outputs record.
    pub fn multiply_shift(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi, "range({lo}, {hi})");
        lo + self.below((hi - lo + 1) as usize) as i64
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Fisher–Yates.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// `k` distinct elements in random order (all of them when `k` exceeds the length).
    pub fn sample<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut idx: Vec<usize> = (0..items.len()).collect();
        self.shuffle(&mut idx);
        idx.into_iter().take(k).map(|i| items[i].clone()).collect()
    }
}

/// Inverse of the standard normal CDF (Acklam's rational approximation, relative error
/// below 1.2e-9, far below anything a latency profile can distinguish).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] =
        [7.784_695_709_041_462e-3, 3.224_671_290_700_398e-1, 2.445_134_137_142_996, 3.754_408_661_907_416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    const LOW: f64 = 0.02425;
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_value() {
        // First output of SplitMix64 seeded with 0, as published with the algorithm.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn splitmix_matches_the_published_sequence() {
        // Reference values of SplitMix64 seeded with 1234567 (from the original C code).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
    }

    #[test]
    fn below_stays_in_range_and_reaches_every_value() {
        let mut r = SplitMix64::new(9);
        let mut seen = [false; 7];
        for _ in 0..500 {
            seen[r.below(7)] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn below_and_below_modulo_agree_outside_the_rejection_zone() {
        // The two differ only on the top `2^64 mod n` values of a draw.
        let (mut a, mut b) = (SplitMix64::new(3), SplitMix64::new(3));
        for n in 1..1000 {
            assert_eq!(a.below(n), b.below_modulo(n));
        }
    }

    #[test]
    fn derived_streams_are_stable_and_distinct() {
        let first = |parts: &[u64]| SplitMix64::derive(20261129, parts).next_u64();
        assert_eq!(first(&[key("ticket-triage"), 7, 0]), first(&[key("ticket-triage"), 7, 0]));
        assert_ne!(first(&[key("ticket-triage"), 7, 0]), first(&[key("ticket-triage"), 8, 0]));
        assert_ne!(first(&[key("ticket-triage"), 7, 0]), first(&[key("ticket-triage"), 7, 1]));
        assert_eq!(key(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn uniforms_are_open_and_roughly_uniform() {
        let mut r = SplitMix64::new(42);
        let xs: Vec<f64> = (0..20_000).map(|_| r.next_f64()).collect();
        assert!(xs.iter().all(|&x| x > 0.0 && x < 1.0));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
    }

    #[test]
    fn normal_quantile_matches_known_values() {
        for (p, z) in [(0.5, 0.0), (0.975, 1.959_964), (0.05, -1.644_854), (0.99, 2.326_348), (1e-6, -4.753_424)] {
            assert!((normal_quantile(p) - z).abs() < 1e-5, "p={p}: {}", normal_quantile(p));
        }
    }
}
