//! Deterministic selection, identical to the reference runner's for the same release hash:
//! per family, seed = SHA-256(slug \0 release hash \0 family \0 algorithm version) read as a
//! big-endian integer; the family's ids sorted by code point are shuffled with CPython's
//! `random.Random(seed).shuffle`; the first N are selected.
use crate::cpython_random::{big_endian_to_decimal, Mt19937};
use inferbench_schemas::dataset::Dataset;
use inferbench_schemas::tables::SelectionRow;
use sha2::{Digest, Sha256};

/// The reference runner's schedule algorithm version; part of every seed and id.
pub const ALGORITHM_VERSION: &str = "micro-single-task-paired-round-robin-sha256-v1";

/// The 32-byte seed of one family.
pub fn family_seed(slug: &str, release_hash: &str, family: &str) -> [u8; 32] {
    let text = [slug, release_hash, family, ALGORITHM_VERSION].join("\0");
    Sha256::digest(text.as_bytes()).into()
}

/// The family's ids in their deterministic order.
pub fn family_order(seed: &[u8; 32], ids: &[&str]) -> Vec<String> {
    let mut sorted: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    sorted.sort();
    Mt19937::from_big_endian(seed).shuffle(&mut sorted);
    sorted
}

/// The selection table and each family's seed (decimal), in spec family order.
pub fn select(
    dataset: &Dataset,
    slug: &str,
    families: &[String],
    per_family: usize,
) -> (Vec<SelectionRow>, Vec<(String, String)>) {
    let mut rows = Vec::new();
    let mut seeds = Vec::new();
    for family in families {
        let items = &dataset.items[family];
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        let seed = family_seed(slug, &dataset.release_hash, family);
        seeds.push((family.clone(), big_endian_to_decimal(&seed)));
        for (position, id) in family_order(&seed, &ids).into_iter().enumerate() {
            let item = items
                .iter()
                .find(|i| i.id == id)
                .expect("ids come from these items");
            rows.push(SelectionRow {
                task_family: family.clone(),
                position: position as i64,
                item_id: id,
                selected: position < per_family,
                item_sha256: item.sha256.clone(),
            });
        }
    }
    (rows, seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLUG: &str = "inference-micro-single-task";

    fn ids(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}-{i:04}")).collect()
    }

    fn check(family: &str, n: usize, seed_decimal: &str, first_five: [usize; 5], at_199: usize) {
        let seed = family_seed(SLUG, &"0".repeat(64), family);
        assert_eq!(big_endian_to_decimal(&seed), seed_decimal);
        let all = ids(family, n);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let order = family_order(&seed, &refs);
        let expected: Vec<String> = first_five
            .iter()
            .map(|i| format!("{family}-{i:04}"))
            .collect();
        assert_eq!(&order[..5], &expected[..]);
        assert_eq!(order[199], format!("{family}-{at_199:04}"));
    }

    // seed-runner.md Appendix A, computed with CPython 3.11.
    #[test]
    fn appendix_a_meeting_notes() {
        check(
            "meeting-notes-lookup",
            237,
            "83417398128584533604752361167112460407250609832390919526275588942410437184981",
            [30, 124, 116, 84, 192],
            231,
        );
    }

    #[test]
    fn appendix_a_ticket_triage() {
        check(
            "ticket-triage",
            244,
            "7252476178777032361079223944334536487419183499372647278561609515740650445218",
            [87, 169, 107, 23, 151],
            58,
        );
        let seed = family_seed(SLUG, &"0".repeat(64), "ticket-triage");
        let small: Vec<String> = (0..10).map(|i| format!("t-{i:03}")).collect();
        let refs: Vec<&str> = small.iter().map(String::as_str).collect();
        let order: Vec<String> = family_order(&seed, &refs);
        let expected = [
            "t-004", "t-008", "t-007", "t-002", "t-006", "t-003", "t-009", "t-000", "t-001",
            "t-005",
        ];
        assert_eq!(order, expected);
    }

    #[test]
    fn appendix_a_contract_terms() {
        check(
            "contract-terms-extraction",
            240,
            "49967799256847745903666486937216041658221172112297535892810132396564582362075",
            [20, 210, 66, 166, 21],
            45,
        );
    }
}
