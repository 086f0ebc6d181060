//! What the simulated model knows and says, shared by `ib-sim` (which serves it) and
//! `ib-synth` (which writes the log a fetch against it would have written), the seeded
//! generator that they, `ib-data` and `ib-schedule` draw from, and the exact-length text of a
//! load workflow's synthetic prompts.
//!
//! - [`dataset`]: the dataset, loaded and validated by the contract's loader, with each
//!   item's gold in a typed form and a lookup by user prompt.
//! - [`answer`]: the answer to a request, the gold rendered as the model writes it or a
//!   plausible wrong answer of the same schema, and the reasoning, split into real o200k_base
//!   tokens for streaming.
//! - [`synthetic`]: text of an exact o200k_base length, a load workflow's synthetic prompts
//!   and the simulated model's answers of a requested length.
//! - [`bootstrap`]: the seeded paired bootstrap of `ib-compare` and of `ib-aggregate`'s rank
//!   ranges.
//! - [`rng`]: the one seeded generator (SplitMix64) every draw of these three tools comes
//!   from, the stream key of a name, and the normal quantile function.
//!
//! It knows nothing of the network or of run directories: no socket, HTTP, event stream or
//! log. The simulator's server, profiles, faults and timing stay in `tools/sim/`; the events
//! of a run and their writing in `tools/synth/`. It reads only the dataset directory it is
//! given.
pub mod answer;
pub mod bootstrap;
pub mod dataset;
pub mod rng;
pub mod synthetic;
