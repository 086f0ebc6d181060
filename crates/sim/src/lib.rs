//! What the simulated model knows and says, shared by `ib-sim` (which serves it) and
//! `ib-synth` (which writes the log a fetch against it would have written). No stage uses it
//! (`tests/e2e/tidy.rs`): what the pipeline shares with the simulator, the seeded generator
//! and the exact-length text, lives below it (`inferbench_stats::rng`,
//! `inferbench_judge::synthetic`).
//!
//! - [`dataset`]: the dataset, loaded and validated by the contract's loader, with each
//!   item's gold in a typed form and a lookup by user prompt.
//! - [`answer`]: the answer to a request, the gold rendered as the model writes it or a
//!   plausible wrong answer of the same schema, and the reasoning, split into real o200k_base
//!   tokens for streaming, every choice drawn from the shared seeded generator.
//!
//! It knows nothing of the network or of run directories: no socket, HTTP, event stream or
//! log. The simulator's server, profiles, faults and timing stay in `tools/sim/`; the events
//! of a run and their writing in `tools/synth/`. It reads only the dataset directory it is
//! given.
pub mod answer;
pub mod dataset;
