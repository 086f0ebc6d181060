//! Even plans of kinds over a family's items, drawn from the shared seeded generator
//! (`inferbench_stats::rng`): which triage case, contract term or meeting topic item *i* is
//! about.
use inferbench_stats::rng::{key, SplitMix64};

/// A plan that visits every entry of `deck` (entries repeated by their weight) once per
/// round, each round in its own shuffled order: `plan(i)` for consecutive `i` spreads the
/// kinds evenly over any prefix, so a sample of six items already shows six different kinds.
pub fn rounds<T: Clone>(seed: u64, tag: &str, deck: &[(T, usize)], n: usize) -> Vec<T> {
    let flat: Vec<T> = deck.iter().flat_map(|(t, w)| std::iter::repeat_n(t.clone(), *w)).collect();
    let mut out = Vec::with_capacity(n);
    let mut round = 0u64;
    while out.len() < n {
        let mut this = flat.clone();
        SplitMix64::derive(seed, &[key(tag), round]).shuffle(&mut this);
        out.extend(this);
        round += 1;
    }
    out.truncate(n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_visit_every_kind_once_per_round() {
        let plan = rounds(5, "x", &[('a', 1), ('b', 2), ('c', 1)], 8);
        let first: String = plan[..4].iter().collect();
        let mut sorted: Vec<char> = first.chars().collect();
        sorted.sort();
        assert_eq!(sorted, vec!['a', 'b', 'b', 'c']);
        assert_eq!(plan.len(), 8);
    }
}
