//! The stage's second phase: every figure of the run, computed from its inputs before anything
//! is written. The tables are joined and checked (`join`), the prompt-cache probe's requests
//! taken out with their own figures (`cache`), then come the groups, pooled rows, ranking and
//! rank separation (`metrics`), the paired comparisons (`comparisons`) and a load run's steps
//! (`load`).
use crate::comparisons::{self, Comparisons};
use crate::facts::Tables;
use crate::inputs::{About, LoadInputs};
use crate::metrics::{self, Computed};
use crate::{cache, error, join, load};
use inferbench_contract::documents::{CacheProbeMetrics, LoadMetrics};
use inferbench_contract::vocab::TaskFamily;
use std::collections::{BTreeSet, HashMap};

/// Every figure the four outputs hold.
pub struct Figures {
    /// The groups, pooled rows, ranking and rank separation.
    pub metrics: Computed,
    pub comparisons: Comparisons,
    /// A load run's figures per step and provider.
    pub load: Option<LoadMetrics>,
    /// The prompt-cache probe's figures, when the run has a probe.
    pub cache_probe: Option<CacheProbeMetrics>,
    /// Responses counted (the probe's are not).
    pub responses: usize,
}

/// Computes every figure; the tables failing the join's checks are bad input, every problem named.
pub fn compute(about: &About, tables: Tables, load: Option<LoadInputs>) -> Result<Figures, inferbench_contract::Error> {
    let families = families(about);
    let providers = about.table.names();
    let mut joined = join::join(tables, &families, &providers).map_err(error::invalid)?;
    // Before any other figure: the probe's requests count in its section only.
    let cache_probe = cache::split_off(&mut joined).map(|probe| {
        let providers: BTreeSet<String> = probe.schedule.iter().map(|r| r.provider.clone()).collect();
        cache::compute(&probe, &providers.into_iter().collect::<Vec<_>>())
    });
    let metrics = metrics::compute_with(about.rules, &joined, &families, &about.table);
    let failures = about.reference_paired_failures.as_ref();
    let mut comparisons = comparisons::compute(about.rules, &joined, &about.table, &metrics.pooled, failures);
    comparisons.api_pairs = crate::api_pairs::compute(&about.table, about.spec.inference.api, &joined.observations);
    let load = about.spec.load.as_ref().zip(load).map(|(plan, load)| {
        let correct: HashMap<String, bool> =
            joined.observations.iter().map(|o| (o.response.request_id.clone(), o.evaluation.correct)).collect();
        load::compute(plan, &providers, &joined.schedule, load.responses, &correct, &load.steps)
    });
    Ok(Figures { metrics, comparisons, load, cache_probe, responses: joined.observations.len() })
}

/// The task families the run's requests belong to: a synthetic load workload's requests are
/// all of the one family that is not the dataset's.
fn families(about: &About) -> Vec<TaskFamily> {
    let synthetic = about.spec.load.as_ref().is_some_and(|l| l.workload.synthetic().is_some());
    if synthetic {
        vec![TaskFamily::Synthetic]
    } else {
        about.spec.task_families()
    }
}
