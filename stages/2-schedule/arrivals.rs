//! When a load step's requests arrive: offsets in ns from the step's start, in order, all
//! before the step's end.
//!
//! - constant: `k / rate` for k = 0, 1, …;
//! - Poisson: the first arrival one exponential gap (mean `1 / rate`) after the start, each
//!   next one a further gap;
//! - gamma: gaps of a gamma distribution with shape `burstiness` and scale
//!   `1 / (rate × burstiness)`, so the mean gap is `1 / rate` whatever the shape and the
//!   coefficient of variation is `1 / √burstiness` (vLLM's `--burstiness`: 1 is Poisson, below
//!   1 burstier, above 1 more even);
//! - trace: the trace's offsets divided by the step's speed-up; arrivals at or after the
//!   step's end are not replayed (`Offsets::cut` counts them).
//!
//! Random gaps come from the project's one seeded generator, one stream per step
//! (`SplitMix64::derive(seed, [step])`), so a step's arrivals do not change when another step
//! is added, and from hand-written samplers (inversion for the exponential, Marsaglia and
//! Tsang's method for the gamma) whose output no dependency upgrade can change.
use inferbench_contract::vocab::ArrivalProcess;
use inferbench_inputs::spec::{LoadPlan, StepTarget};
use inferbench_inputs::trace::Trace;
use inferbench_stats::rng::{normal_quantile, SplitMix64};

/// A step's arrivals.
#[derive(Debug, Clone, PartialEq)]
pub struct Offsets {
    /// Offsets from the step's start, in ns, non-decreasing.
    pub ns: Vec<u64>,
    /// A trace's arrivals that fall at or after the step's end, not replayed.
    pub cut: usize,
}

/// The arrivals of step `step` (0-based) of `plan`; `trace` is the plan's trace, read.
pub fn step(plan: &LoadPlan, step: usize, trace: Option<&Trace>) -> Offsets {
    let end = plan.step_ns();
    let mut rng = SplitMix64::derive(plan.seed, &[step as u64]);
    match (plan.steps[step], plan.arrivals) {
        (StepTarget::Speedup(speedup), _) => {
            let all: Vec<u64> = trace.map(|t| t.offsets_ns(speedup).collect()).unwrap_or_default();
            let kept = all.partition_point(|&t| t < end);
            Offsets { cut: all.len() - kept, ns: all[..kept].to_vec() }
        }
        // A closed loop's users send as their answers end: no arrival is scheduled.
        (StepTarget::Users(_), _) => Offsets { ns: Vec::new(), cut: 0 },
        (StepTarget::Rate(rate), ArrivalProcess::Constant) => {
            let ns = (0u64..).map(|k| (k as f64 * 1e9 / rate).round() as u64).take_while(|&t| t < end).collect();
            Offsets { ns, cut: 0 }
        }
        (StepTarget::Rate(rate), process) => {
            let shape = plan.burstiness.filter(|_| process == ArrivalProcess::Gamma).unwrap_or(1.0);
            let mut ns = Vec::with_capacity((rate * plan.step_seconds * 1.1) as usize + 16);
            let mut t = 0.0f64;
            loop {
                let gap = if process == ArrivalProcess::Gamma {
                    gamma(&mut rng, shape) / shape
                } else {
                    exponential(&mut rng)
                };
                t += gap * 1e9 / rate;
                let at = t.round();
                if at >= end as f64 {
                    break;
                }
                ns.push(at as u64);
            }
            Offsets { ns, cut: 0 }
        }
    }
}

/// An exponential variate of mean 1, by inversion.
fn exponential(rng: &mut SplitMix64) -> f64 {
    -rng.next_f64().ln()
}

/// A gamma variate of shape `k` and scale 1 (Marsaglia and Tsang 2000; for `k < 1`, a variate
/// of shape `k + 1` times `U^(1/k)`).
fn gamma(rng: &mut SplitMix64, k: f64) -> f64 {
    if k < 1.0 {
        let boost = rng.next_f64().powf(1.0 / k);
        return gamma(rng, k + 1.0) * boost;
    }
    let d = k - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal_quantile(rng.next_f64());
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = rng.next_f64();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::vocab::LoadMode;
    use inferbench_inputs::spec::Objectives;

    fn plan(arrivals: ArrivalProcess, steps: Vec<StepTarget>, seconds: f64, burstiness: Option<f64>) -> LoadPlan {
        LoadPlan {
            mode: LoadMode::OpenLoop,
            arrivals,
            burstiness,
            trace: None,
            trace_name: None,
            steps,
            search: None,
            concurrency_cap: None,
            requests_per_user: None,
            step_seconds: seconds,
            warmup_seconds: 0.0,
            cooldown_seconds: 0.0,
            seed: 42,
            workload: Default::default(),
            objectives: Objectives::default(),
        }
    }

    /// Mean and coefficient of variation of the gaps, in seconds.
    fn gaps(ns: &[u64]) -> (f64, f64) {
        let gaps: Vec<f64> = ns.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e9).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (gaps.len() - 1) as f64;
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn constant_arrivals_are_evenly_spaced_from_the_start() {
        let p = plan(ArrivalProcess::Constant, vec![StepTarget::Rate(4.0), StepTarget::Rate(3.0)], 1.0, None);
        assert_eq!(step(&p, 0, None).ns, [0, 250_000_000, 500_000_000, 750_000_000]);
        assert_eq!(step(&p, 1, None).ns, [0, 333_333_333, 666_666_667]);
    }

    #[test]
    fn poisson_gaps_have_the_mean_of_the_rate_and_a_variation_of_one() {
        let p = plan(ArrivalProcess::Poisson, vec![StepTarget::Rate(200.0)], 100.0, None);
        let offsets = step(&p, 0, None);
        // 20,000 expected; a Poisson count's standard deviation is √20,000 ≈ 141.
        assert!((19_400..=20_600).contains(&offsets.ns.len()), "{}", offsets.ns.len());
        let (mean, cv) = gaps(&offsets.ns);
        assert!((mean - 0.005).abs() < 0.0002, "mean gap {mean}");
        assert!((cv - 1.0).abs() < 0.03, "coefficient of variation {cv}");
        assert!(offsets.ns.windows(2).all(|w| w[0] <= w[1]) && *offsets.ns.last().unwrap() < 100_000_000_000);
        assert_eq!(step(&p, 0, None), offsets, "a function of the seed");
        let mut other = p.clone();
        other.seed = 43;
        assert_ne!(step(&other, 0, None), offsets, "another seed, other arrivals");
    }

    #[test]
    fn gamma_gaps_keep_the_mean_and_vary_by_one_over_the_root_of_the_shape() {
        for (shape, want_cv) in [(0.25, 2.0), (1.0, 1.0), (4.0, 0.5)] {
            let p = plan(ArrivalProcess::Gamma, vec![StepTarget::Rate(100.0)], 200.0, Some(shape));
            let (mean, cv) = gaps(&step(&p, 0, None).ns);
            assert!((mean - 0.01).abs() < 0.0006, "shape {shape}: mean gap {mean}");
            assert!((cv - want_cv).abs() < 0.06 * want_cv, "shape {shape}: cv {cv}, want {want_cv}");
        }
    }

    #[test]
    fn each_step_draws_its_own_stream() {
        let p = plan(ArrivalProcess::Poisson, vec![StepTarget::Rate(10.0), StepTarget::Rate(20.0)], 10.0, None);
        let mut longer = p.clone();
        longer.steps.push(StepTarget::Rate(40.0));
        assert_eq!(step(&p, 1, None), step(&longer, 1, None), "adding a step changes no other step");
        assert_ne!(step(&p, 0, None).ns[..5], step(&p, 1, None).ns[..5]);
    }

    #[test]
    fn a_trace_is_replayed_at_its_offsets_sped_up_and_cut_at_the_step_end() {
        let trace = Trace::read(
            "{\"offset_ms\": 0}\n{\"offset_ms\": 400}\n{\"offset_ms\": 1200}\n{\"offset_ms\": 2500}".as_bytes(),
            "t",
        )
        .unwrap();
        let p = plan(ArrivalProcess::Trace, vec![StepTarget::Speedup(1.0), StepTarget::Speedup(2.0)], 2.0, None);
        assert_eq!(step(&p, 0, Some(&trace)), Offsets { ns: vec![0, 400_000_000, 1_200_000_000], cut: 1 });
        assert_eq!(step(&p, 1, Some(&trace)), Offsets { ns: vec![0, 200_000_000, 600_000_000, 1_250_000_000], cut: 0 });
    }
}
