//! Deterministic selection, identical to the reference runner's for the same release hash:
//! per family, seed = SHA-256(slug \0 release hash \0 family \0 algorithm version) read as a
//! big-endian integer; the family's ids sorted by code point are shuffled with CPython's
//! `random.Random(seed).shuffle`; the first N are selected.
use crate::cpython_random::{big_endian_to_decimal, Mt19937};
use inferbench_contract::tables::SelectionRow;
use inferbench_contract::vocab::TaskFamily;
use inferbench_inputs::dataset::Dataset;
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

/// The selection table and each family's seed (decimal), in spec family order, seeded with
/// `release_hash` (the dataset's, under the convention `--release-hash` chose).
pub fn select(
    dataset: &Dataset,
    release_hash: &str,
    slug: &str,
    families: &[TaskFamily],
    per_family: usize,
) -> (Vec<SelectionRow>, Vec<(String, String)>) {
    let mut rows = Vec::new();
    let mut seeds = Vec::new();
    for &family in families {
        let items = &dataset.items[&family];
        let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        // By id: a family of 100,000 items cannot afford a scan per selected item.
        let by_id: std::collections::HashMap<&str, &inferbench_inputs::dataset::Item> =
            items.iter().map(|i| (i.id.as_str(), i)).collect();
        let seed = family_seed(slug, release_hash, family.as_str());
        seeds.push((family.to_string(), big_endian_to_decimal(&seed)));
        for (position, id) in family_order(&seed, &ids).into_iter().enumerate() {
            let item = by_id[id.as_str()];
            rows.push(SelectionRow {
                task_family: family,
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
        let expected: Vec<String> = first_five.iter().map(|i| format!("{family}-{i:04}")).collect();
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
        let expected = ["t-004", "t-008", "t-007", "t-002", "t-006", "t-003", "t-009", "t-000", "t-001", "t-005"];
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

    /// Further vectors computed with CPython 3.11 (`random.Random(seed).shuffle`), for other
    /// release hashes: first five positions, position 199 and the last position.
    #[test]
    fn further_cpython_vectors_for_other_release_hashes() {
        let inferbench = inferbench_contract::canonical::sha256_hex(b"inferbench");
        // release hash, family, pool size, the first five positions, position 199, the last position
        type Case<'a> = (&'a str, &'a str, usize, [usize; 5], usize, usize);
        let cases: [Case; 6] = [
            (&inferbench, "meeting-notes-lookup", 237, [125, 96, 143, 200, 25], 71, 86),
            (&inferbench, "ticket-triage", 244, [226, 140, 206, 231, 229], 135, 73),
            (&inferbench, "contract-terms-extraction", 240, [27, 173, 182, 163, 40], 195, 118),
            (&"f".repeat(64), "meeting-notes-lookup", 237, [43, 185, 137, 17, 215], 128, 133),
            (&"f".repeat(64), "ticket-triage", 244, [115, 53, 88, 122, 117], 79, 96),
            (&"f".repeat(64), "contract-terms-extraction", 240, [59, 50, 167, 184, 89], 71, 3),
        ];
        for (release, family, n, first, at_199, last) in cases {
            let all = ids(family, n);
            let refs: Vec<&str> = all.iter().map(String::as_str).collect();
            let order = family_order(&family_seed(SLUG, release, family), &refs);
            let index = |s: &String| s[s.len() - 4..].parse::<usize>().unwrap();
            let got: Vec<usize> = order[..5].iter().map(index).collect();
            assert_eq!(got, first, "{family} {}", &release[..8]);
            assert_eq!((index(&order[199]), index(&order[n - 1])), (at_199, last), "{family}");
        }
    }

    /// CPython seeds of one, two and three 32-bit words (`random.Random(s).shuffle(range(25))`).
    #[test]
    fn cpython_shuffles_for_multi_word_seeds() {
        let cases: [(u128, [u32; 25]); 4] = [
            (1, [10, 20, 24, 21, 23, 5, 22, 13, 16, 9, 11, 17, 0, 7, 1, 6, 12, 19, 14, 15, 3, 8, 2, 18, 4]),
            (1 << 32, [9, 4, 23, 16, 15, 22, 24, 7, 12, 18, 5, 8, 6, 1, 2, 20, 14, 17, 10, 19, 21, 0, 13, 11, 3]),
            ((1 << 64) + 7, [22, 6, 11, 0, 13, 4, 3, 19, 24, 7, 20, 8, 17, 5, 12, 18, 9, 23, 15, 21, 16, 14, 1, 10, 2]),
            (
                12_345_678_901_234_567_890_123,
                [19, 9, 15, 16, 1, 3, 0, 17, 21, 10, 24, 14, 23, 22, 8, 13, 7, 2, 11, 6, 12, 20, 4, 18, 5],
            ),
        ];
        for (seed, expected) in cases {
            let mut items: Vec<u32> = (0..25).collect();
            crate::cpython_random::Mt19937::from_big_endian(&seed.to_be_bytes()).shuffle(&mut items);
            assert_eq!(items, expected, "seed {seed}");
        }
    }
}
