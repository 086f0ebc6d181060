//! Which scoring rules derived a table: inferbench's own (the default), or the reference
//! runner's, where inferbench deliberately differs from it (README "Definitions").
//!
//! The reference's rules exist so that a re-scored reference run can be shown to differ from
//! the reference's published figures only by the documented deviations: score it both ways,
//! and the reference rules reproduce the reference's figures. Under them:
//!
//! - a 2xx stream that ends cleanly is `completed`, with or without `[DONE]` or a
//!   `finish_reason`, and with no event at all (an empty answer); events after `[DONE]` still
//!   join the answer; an `error` event or an in-band `error` member is an ordinary event;
//!   data that is not a JSON object is a `transport_error` (the reference's `invalid_sse`);
//! - answer or reasoning text containing a special-token string (`<|endoftext|>`) fails the
//!   request as a `transport_error`, as the reference's tokenizer raises on it;
//! - a provider's model identity must be the exact model id (no aliases), at least one of its
//!   responses must be a completed 2xx naming it, and every scheduled request must have a
//!   record; a provider with any HTTP error response, or any response naming another model,
//!   is left out of the paired comparisons (reference §12.2 item 10).
//!
//! A table derived under the reference's rules records it in its provenance
//! (`scoring_rules: reference`); a later stage refuses to mix rules.
use inferbench_contract::provenance::Inputs;
use inferbench_contract::{Error, Result};

/// The provenance key a table derived under non-default rules records.
pub const KEY: &str = "scoring_rules";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Rules {
    /// inferbench's definitions (README "Definitions").
    #[default]
    Inferbench,
    /// The reference runner's behaviour where inferbench deliberately differs.
    Reference,
}

impl Rules {
    pub const ALL: [Rules; 2] = [Rules::Inferbench, Rules::Reference];

    /// What the rules are, for a command line's help.
    pub fn help(self) -> &'static str {
        match self {
            Rules::Inferbench => "inferbench's definitions (README \"Definitions\")",
            Rules::Reference => "The reference runner's behaviour where inferbench deliberately differs",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Rules::Inferbench => "inferbench",
            Rules::Reference => "reference",
        }
    }

    /// The rules named `name` (`inferbench` or `reference`).
    pub fn named(name: &str) -> Option<Rules> {
        Rules::ALL.into_iter().find(|r| r.as_str() == name)
    }

    pub fn is_reference(self) -> bool {
        self == Rules::Reference
    }

    /// Records the rules in a derived table's provenance (nothing for the default, so the
    /// default's outputs are unchanged).
    pub fn record(self, inputs: &mut Inputs) {
        if self.is_reference() {
            inputs.insert(KEY.to_string(), self.as_str().to_string());
        }
    }

    /// The rules a derived file's provenance records.
    pub fn of(inputs: &Inputs) -> Rules {
        inputs.get(KEY).and_then(|name| Rules::named(name)).unwrap_or_default()
    }

    /// Refuses `file` (exit 4) when it was derived under other rules than `self`.
    pub fn check(self, file: &str, inputs: &Inputs) -> Result<()> {
        let theirs = Rules::of(inputs);
        if theirs == self {
            return Ok(());
        }
        Err(Error::LockMismatch(format!(
            "{file}: was derived under the {} scoring rules, this stage runs under the {} ones; rerun the stages \
             after the fetch with the same --rules",
            theirs.as_str(),
            self.as_str()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_records_nothing_and_mixing_is_refused() {
        let mut inputs = Inputs::new();
        Rules::Inferbench.record(&mut inputs);
        assert!(inputs.is_empty());
        Rules::Reference.record(&mut inputs);
        assert_eq!(Rules::of(&inputs), Rules::Reference);
        Rules::Reference.check("responses.parquet", &inputs).unwrap();
        let err = Rules::Inferbench.check("responses.parquet", &inputs).unwrap_err();
        assert!(matches!(err, Error::LockMismatch(_)));
        assert!(err.to_string().contains("derived under the reference scoring rules"), "{err}");
    }
}
