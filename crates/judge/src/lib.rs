//! `inferbench-judge`: one attempt's stream in, its outcome, timings and tokens out.
//!
//! The same functions judge a stream live (`ib-fetch` decides when it is over) and on replay
//! (`ib-reconstruct`, `ib-watch`), so the two can never disagree. The judge stands on the
//! contract, and on the statistics crate for its seeded generator alone (the synthetic text's
//! draws): it opens no file and no socket, and knows no run directory. The figures computed
//! over many judged attempts (percentiles, intervals) are `inferbench-stats`'s.
//!
//! - [`sse`]: a provider's response bytes framed into server-sent events, incrementally.
//! - [`stream`]: when a 2xx event stream is over and how it ended.
//! - [`streaming`]: how an answer streamed: its chunks, their tokens, whether it came at once.
//! - [`timing`]: the one function that turns logged SSE events into TTFO, TTFA, E2E and tokens/s.
//! - [`tokenizer`]: the o200k tokenizer every token count uses.
//! - [`synthetic`]: text of an exact o200k_base length (its words checked with the tokenizer):
//!   a load workflow's synthetic prompts (`ib-schedule`) and the simulated answers of a
//!   requested length (`ib-sim`).
//! - [`rules`]: inferbench's scoring rules, or the reference runner's where they differ.

pub mod rules;
pub mod sse;
pub mod stream;
pub mod streaming;
#[cfg(test)]
mod streams;
pub mod synthetic;
pub mod timing;
pub mod tokenizer;
