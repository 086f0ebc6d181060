//! Which requests fail, and how: each failure class has a share of the requests, laid out
//! per provider in blocks of [`BLOCK`] requests. Within a block every class gets exactly its
//! share (rounded cumulatively to whole requests), at positions a seeded shuffle of the block
//! chooses; so a run of whole blocks holds each class's count exactly, and the classes still
//! fall at random rounds rather than in a pattern.
use inferbench_contract::vocab::OperationalOutcome;
use inferbench_contract::{Error, Result};
use inferbench_stats::rng::SplitMix64;

/// Requests per provider per block.
pub const BLOCK: usize = 1000;

/// What happens to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Completed,
    Timeout,
    Http429,
    Http5xx,
    TransportError,
    InvalidStream,
    Truncated,
    StreamError,
}

impl Class {
    /// The failure classes, in the order their shares are laid out.
    pub const FAILURES: [Class; 7] = [
        Class::Timeout,
        Class::Http429,
        Class::Http5xx,
        Class::TransportError,
        Class::InvalidStream,
        Class::Truncated,
        Class::StreamError,
    ];

    /// The outcome class `ib-reconstruct` gives such a request (`operational_outcome`).
    pub fn operational(self) -> OperationalOutcome {
        match self {
            Class::Completed => OperationalOutcome::Success,
            Class::Timeout => OperationalOutcome::Timeout,
            Class::Http429 => OperationalOutcome::Http429,
            Class::Http5xx => OperationalOutcome::Http5xx,
            Class::TransportError => OperationalOutcome::TransportError,
            Class::InvalidStream => OperationalOutcome::InvalidStream,
            Class::Truncated => OperationalOutcome::Truncated,
            Class::StreamError => OperationalOutcome::StreamError,
        }
    }
}

/// The share of each failure class, in [`Class::FAILURES`] order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shares(pub [f64; 7]);

impl Shares {
    /// Checks every share is in [0, 1] and that together they leave room for success: the
    /// command line's shares, so a bad one is bad input.
    pub fn new(shares: [f64; 7]) -> Result<Shares> {
        for (class, share) in Class::FAILURES.iter().zip(shares) {
            if !(0.0..=1.0).contains(&share) {
                let message = format!("the share of {} must be between 0 and 1, got {share}", class.operational());
                return Err(Error::bad(message));
            }
        }
        let total: f64 = shares.iter().sum();
        if total > 1.0 + 1e-9 {
            return Err(Error::bad(format!("the failure shares add up to {total}, more than every request")));
        }
        Ok(Shares(shares))
    }

    /// How many requests of each failure class one block holds: the cumulative shares
    /// rounded to whole requests, so the counts add up to the rounded total.
    pub fn per_block(&self) -> [usize; 7] {
        let mut counts = [0; 7];
        let mut cumulative = 0.0;
        let mut placed = 0;
        for (i, share) in self.0.iter().enumerate() {
            cumulative += share;
            let upto = ((cumulative * BLOCK as f64).round() as usize).min(BLOCK);
            counts[i] = upto - placed;
            placed = upto;
        }
        counts
    }
}

/// One provider's classes, block by block, in request order.
#[derive(Debug, Clone)]
pub struct Stratifier {
    key: u64,
    counts: [usize; 7],
    block: Option<(u64, Vec<Class>)>,
}

impl Stratifier {
    pub fn new(seed: u64, provider: &str, shares: &Shares) -> Stratifier {
        let mut key = seed ^ 0x5E_ED0F_5717_u64;
        for b in provider.bytes() {
            key = (key ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
        }
        Stratifier { key, counts: shares.per_block(), block: None }
    }

    /// The class of the provider's request number `n` (0-based).
    pub fn class(&mut self, n: u64) -> Class {
        let block = n / BLOCK as u64;
        if self.block.as_ref().is_none_or(|(b, _)| *b != block) {
            let mut classes = Vec::with_capacity(BLOCK);
            for (class, count) in Class::FAILURES.iter().zip(self.counts) {
                classes.extend(std::iter::repeat_n(*class, count));
            }
            classes.resize(BLOCK, Class::Completed);
            // Fisher-Yates with the block's own generator.
            let mut rng = SplitMix64::new(self.key ^ block.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            for i in (1..BLOCK).rev() {
                classes.swap(i, rng.below_modulo(i + 1));
            }
            self.block = Some((block, classes));
        }
        self.block.as_ref().map(|(_, c)| c[(n % BLOCK as u64) as usize]).unwrap_or(Class::Completed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_block_holds_every_share_exactly() {
        let shares = Shares::new([0.001, 0.002, 0.0015, 0.0, 0.01, 0.0005, 0.003]).unwrap();
        let counts = shares.per_block();
        assert_eq!(
            counts,
            [1, 2, 2, 0, 10, 0, 3],
            "cumulative rounding: 1, 3, 4.5→5, 5, 15, 15.5→16, 19 (rounded half away)"
        );
        let mut s = Stratifier::new(7, "Z.AI", &shares);
        for block in 0..3u64 {
            let mut seen = std::collections::BTreeMap::new();
            for n in block * 1000..(block + 1) * 1000 {
                *seen.entry(s.class(n)).or_insert(0usize) += 1;
            }
            for (class, count) in Class::FAILURES.iter().zip(counts) {
                assert_eq!(seen.get(class).copied().unwrap_or(0), count, "{class:?} in block {block}");
            }
            assert_eq!(seen[&Class::Completed], 1000 - counts.iter().sum::<usize>());
        }
    }

    #[test]
    fn positions_depend_on_seed_provider_and_block() {
        let shares = Shares::new([0.05; 7]).unwrap();
        let layout = |seed, provider: &str, block: u64| {
            let mut s = Stratifier::new(seed, provider, &shares);
            (block * 1000..block * 1000 + 1000).map(|n| s.class(n)).collect::<Vec<_>>()
        };
        assert_eq!(layout(1, "a", 0), layout(1, "a", 0));
        assert_ne!(layout(1, "a", 0), layout(2, "a", 0));
        assert_ne!(layout(1, "a", 0), layout(1, "b", 0));
        assert_ne!(layout(1, "a", 0), layout(1, "a", 1));
    }

    #[test]
    fn every_class_is_the_outcome_the_stages_give_it() {
        let names: Vec<&str> =
            [Class::Completed].into_iter().chain(Class::FAILURES).map(|c| c.operational().as_str()).collect();
        assert_eq!(
            names,
            ["2xx", "timeout", "429", "5xx", "transport_error", "invalid_stream", "truncated", "stream_error"]
        );
    }

    #[test]
    fn bad_shares_are_refused() {
        assert!(Shares::new([-0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).is_err());
        assert!(Shares::new([0.5, 0.6, 0.0, 0.0, 0.0, 0.0, 0.0]).is_err());
        assert!(Shares::new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).is_ok());
    }
}
