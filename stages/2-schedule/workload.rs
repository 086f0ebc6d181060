//! A synthetic workload's requests (`load.workload.kind: synthetic`): each arrival's prompt
//! length and requested answer length, drawn from the spec's distributions (or taken from the
//! replayed trace's line), and its prompt: the shared prefix, then words of its own, exactly
//! that many o200k_base tokens in all (`inferbench_judge::synthetic`).
//!
//! Everything is drawn from the project's seeded generator, from `load.seed`: the prefix from
//! one stream, each arrival's lengths and words from a stream of its own
//! (`SplitMix64::derive(seed, [PROMPTS, step, index in the step])`), so the schedule is a
//! function of the lock and adding a step changes no other step's prompts. The samplers are
//! written out here (inversion through the normal quantile for the normal and the log-normal,
//! rejection for the uniform) so that no dependency upgrade can change a draw.
use inferbench_contract::documents::TokenLengths;
use inferbench_contract::vocab::LengthDistribution;
use inferbench_inputs::spec::Synthetic;
use inferbench_inputs::trace::Arrival;
use inferbench_judge::synthetic;
use inferbench_stats::rng::{key, normal_quantile, SplitMix64};

/// One synthetic request: its prompt, the prompt's exact length in tokens and the answer
/// tokens it asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub prompt: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// The prompts of one synthetic workload.
pub struct Prompts<'a> {
    workload: &'a Synthetic,
    seed: u64,
    /// The first `shared_prefix_tokens` tokens of every prompt.
    prefix: String,
}

impl<'a> Prompts<'a> {
    pub fn new(seed: u64, workload: &'a Synthetic) -> Prompts<'a> {
        let mut rng = SplitMix64::derive(seed, &[key("synthetic-prefix")]);
        let prefix = synthetic::text(workload.shared_prefix_tokens as usize, &mut rng);
        Prompts { workload, seed, prefix }
    }

    /// Arrival `index` of step `step`; `recorded` is the trace's line it replays, whose sizes
    /// are sent where it gives them (the spec checked that a line without them has the
    /// spec's lengths to stand in).
    pub fn request(&self, step: usize, index: usize, recorded: Option<&Arrival>) -> Request {
        let mut rng = SplitMix64::derive(self.seed, &[key("synthetic-prompt"), step as u64, index as u64]);
        let mut length = |given: Option<u64>, lengths: Option<&TokenLengths>| -> u32 {
            match (given, lengths) {
                (Some(n), _) => n as u32,
                (None, Some(lengths)) => draw(lengths, &mut rng),
                (None, None) => unreachable!("the trace's lines were checked against the spec when it was read"),
            }
        };
        let input_tokens = length(recorded.and_then(|a| a.input_tokens), self.workload.input_tokens.as_ref());
        let output_tokens = length(recorded.and_then(|a| a.output_tokens), self.workload.output_tokens.as_ref());
        let prefix_tokens = self.workload.shared_prefix_tokens as usize;
        let prompt = synthetic::with_prefix(&self.prefix, prefix_tokens, input_tokens as usize, &mut rng);
        Request { prompt, input_tokens, output_tokens }
    }
}

/// One length drawn from `lengths`, rounded and kept in `[min, max]`.
pub fn draw(lengths: &TokenLengths, rng: &mut SplitMix64) -> u32 {
    let (min, max) = (f64::from(lengths.min), f64::from(lengths.max));
    let (mean, sd) = (lengths.mean.unwrap_or(min), lengths.stddev.unwrap_or(0.0));
    let x = match lengths.distribution {
        LengthDistribution::Constant => min,
        LengthDistribution::Uniform => rng.range(i64::from(lengths.min), i64::from(lengths.max)) as f64,
        LengthDistribution::Normal => mean + sd * normal_quantile(rng.next_f64()),
        LengthDistribution::Lognormal => {
            // The log-normal whose own mean and standard deviation are `mean` and `sd`.
            let sigma2 = (1.0 + (sd / mean).powi(2)).ln();
            let mu = mean.ln() - sigma2 / 2.0;
            (mu + sigma2.sqrt() * normal_quantile(rng.next_f64())).exp()
        }
    };
    x.round().clamp(min, max) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_judge::tokenizer;

    fn lengths(
        distribution: LengthDistribution,
        min: u32,
        max: u32,
        mean: Option<f64>,
        sd: Option<f64>,
    ) -> TokenLengths {
        TokenLengths { distribution, min, max, mean, stddev: sd }
    }

    fn draws(l: &TokenLengths, n: usize) -> Vec<u32> {
        let mut rng = SplitMix64::new(11);
        (0..n).map(|_| draw(l, &mut rng)).collect()
    }

    fn mean_sd(xs: &[u32]) -> (f64, f64) {
        let mean = xs.iter().map(|x| f64::from(*x)).sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (f64::from(*x) - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
        (mean, var.sqrt())
    }

    #[test]
    fn each_distribution_keeps_its_bounds_and_its_moments() {
        use LengthDistribution::*;
        assert!(draws(&lengths(Constant, 77, 77, None, None), 100).iter().all(|x| *x == 77));
        let uniform = draws(&lengths(Uniform, 10, 20, None, None), 20_000);
        assert!(uniform.iter().all(|x| (10..=20).contains(x)));
        assert_eq!(uniform.iter().collect::<std::collections::BTreeSet<_>>().len(), 11, "every value drawn");
        assert!((mean_sd(&uniform).0 - 15.0).abs() < 0.1);
        // Normal, hardly clipped: its mean and standard deviation.
        let normal = draws(&lengths(Normal, 1, 10_000, Some(500.0), Some(50.0)), 20_000);
        let (m, sd) = mean_sd(&normal);
        assert!((m - 500.0).abs() < 2.0 && (sd - 50.0).abs() < 2.0, "{m} {sd}");
        // Clipped: never outside [min, max], and the mass beyond piles on the bounds.
        let clipped = draws(&lengths(Normal, 450, 520, Some(500.0), Some(50.0)), 20_000);
        assert!(clipped.iter().all(|x| (450..=520).contains(x)));
        assert!(clipped.iter().filter(|x| **x == 520).count() > 20_000 / 5, "about 34 % above 520");
        // Log-normal of the given mean and standard deviation, skewed right.
        let lognormal = draws(&lengths(Lognormal, 1, 1_000_000, Some(200.0), Some(100.0)), 50_000);
        let (m, sd) = mean_sd(&lognormal);
        assert!((m - 200.0).abs() < 3.0 && (sd - 100.0).abs() < 5.0, "{m} {sd}");
        let mut sorted = lognormal.clone();
        sorted.sort();
        assert!(f64::from(sorted[sorted.len() / 2]) < m, "median below the mean");
        assert!(draws(&lengths(Lognormal, 150, 180, Some(160.0), Some(100.0)), 5_000)
            .iter()
            .all(|x| (150..=180).contains(x)));
        let zero_sd = draws(&lengths(Normal, 1, 100, Some(42.0), Some(0.0)), 10);
        assert!(zero_sd.iter().all(|x| *x == 42));
    }

    fn workload(input: TokenLengths, output: TokenLengths, prefix: u32) -> Synthetic {
        Synthetic {
            input_tokens: Some(input),
            output_tokens: Some(output),
            shared_prefix_tokens: prefix,
            ignore_eos: false,
        }
    }

    #[test]
    fn prompts_have_their_exact_lengths_share_their_prefix_and_are_a_function_of_the_seed() {
        use LengthDistribution::*;
        let w = workload(lengths(Uniform, 33, 400, None, None), lengths(Normal, 1, 64, Some(32.0), Some(8.0)), 32);
        let prompts = Prompts::new(5, &w);
        let prefix = &prompts.prefix;
        assert_eq!(tokenizer::count(prefix), 32);
        let mut seen = std::collections::BTreeSet::new();
        for step in 0..3 {
            for index in 0..40 {
                let r = prompts.request(step, index, None);
                assert_eq!(tokenizer::count(&r.prompt), r.input_tokens as usize, "{step}/{index}");
                assert!((33..=400).contains(&r.input_tokens) && (1..=64).contains(&r.output_tokens));
                assert!(r.prompt.starts_with(prefix.as_str()) && r.prompt.as_bytes()[prefix.len()] == b' ');
                seen.insert(r.prompt.clone());
                assert_eq!(Prompts::new(5, &w).request(step, index, None), r, "a function of the seed");
            }
        }
        assert_eq!(seen.len(), 120, "every prompt its own");
        assert_ne!(Prompts::new(6, &w).request(0, 0, None), prompts.request(0, 0, None));
        // A trace's sizes are sent where its line gives them; the spec's stand in for the rest.
        let line = Arrival { offset_ms: 0.0, input_tokens: Some(8000), output_tokens: None };
        let r = prompts.request(0, 0, Some(&line));
        assert_eq!(r.input_tokens, 8000);
        assert_eq!(tokenizer::count(&r.prompt), 8000);
        assert!((1..=64).contains(&r.output_tokens));
        // Without a prefix the prompt starts with a word of its own.
        let bare = workload(lengths(Constant, 1, 1, None, None), lengths(Constant, 5, 5, None, None), 0);
        let r = Prompts::new(5, &bare).request(0, 0, None);
        assert_eq!((tokenizer::count(&r.prompt), r.output_tokens), (1, 5));
    }
}
