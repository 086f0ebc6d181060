//! The paired bootstrap, shared with `ib-aggregate`'s rank ranges: `inferbench_sim::bootstrap`.
pub use inferbench_sim::bootstrap::*;
