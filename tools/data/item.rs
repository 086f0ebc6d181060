//! What a family module makes: one generated item, and the band of tokens its user message
//! must fall in. `generate` hands the band to a family and gives its items to `write`.
use serde_json::Value;

/// One generated item before it becomes a dataset row.
#[derive(Debug, Clone)]
pub struct Generated {
    pub user: String,
    pub gold: Value,
    pub aliases: Vec<String>,
    /// What the item was built to exercise (triage rules, agreement type, answer type…);
    /// read by the tests, never written to the dataset.
    #[cfg_attr(not(test), allow(dead_code))]
    pub tags: Vec<String>,
}

/// The inclusive range of user-message tokens an item must fall in: the spec's band,
/// less the system prompt for the family whose band counts the whole input.
#[derive(Debug, Clone, Copy)]
pub struct UserBand {
    pub lo: usize,
    pub hi: usize,
}

impl UserBand {
    pub fn contains(self, tokens: usize) -> bool {
        (self.lo..=self.hi).contains(&tokens)
    }
}
