//! `inferbench-judge`: one attempt's stream in, its outcome, timings and tokens out.
//!
//! The same functions judge a stream live (`ib-fetch` decides when it is over) and on replay
//! (`ib-reconstruct`, `ib-watch`), so the two can never disagree. The judge stands on the
//! contract alone: it opens no file and no socket, and knows no run directory.
//!
//! - [`sse`]: a provider's response bytes framed into server-sent events, incrementally.
//! - [`stream`]: when a 2xx event stream is over and how it ended.
//! - [`streaming`]: how an answer streamed: its chunks, their tokens, whether it came at once.
//! - [`timing`]: the one function that turns logged SSE events into TTFO, TTFA, E2E and tokens/s.
//! - [`tokenizer`]: the o200k tokenizer every token count uses.
//! - [`rules`]: inferbench's scoring rules, or the reference runner's where they differ.
//! - [`percentile`]: nearest-rank percentiles in integer ranks.
//! - [`interval`]: their distribution-free confidence intervals, and Wilson intervals of rates.

pub mod interval;
pub mod percentile;
pub mod rules;
pub mod sse;
pub mod stream;
pub mod streaming;
#[cfg(test)]
mod streams;
pub mod timing;
pub mod tokenizer;
