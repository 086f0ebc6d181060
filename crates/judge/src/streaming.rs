//! How a complete answer streamed: the events that carried it, the tokens each brought, and
//! whether it arrived all at once ([`is_buffered`]), in which case its tokens/s would time the
//! network and the client, not the generation.
use crate::tokenizer;

/// One event that carried answer text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnswerChunk {
    /// Its arrival, in ms from the actual send.
    pub offset_ms: f64,
    /// The answer's tokens it completed.
    pub tokens: i64,
}

/// The tokens each answer chunk brought: the answer is tokenized whole (as for
/// `visible_answer_tokens`), and a token belongs to the chunk that completed it, the one
/// holding its last byte. A chunk that only began a token brings 0; a chunk of several tokens
/// brings all of them. `chunks` are (arrival, end of the chunk's text in `answer`, in bytes).
pub fn answer_chunks(answer: &str, chunks: &[(f64, usize)]) -> Vec<AnswerChunk> {
    let ends = tokenizer::token_ends(answer);
    let mut tokens = ends.iter().peekable();
    chunks
        .iter()
        .map(|&(offset_ms, end)| {
            let mut n = 0;
            while tokens.next_if(|&&token_end| token_end <= end).is_some() {
                n += 1;
            }
            AnswerChunk { offset_ms, tokens: n }
        })
        .collect()
}

/// The span a streamed answer must cover for each token of its largest delivery, in ms (see
/// [`is_buffered`]).
pub const SPAN_MS_PER_DELIVERED_TOKEN: f64 = 2.0;

/// Whether a complete answer of `visible_answer_tokens` tokens arrived all at once, judged
/// from its chunks ([`answer_chunks`], in arrival order). The rule:
///
/// - a *delivery* is the answer chunks that arrived together, with the same arrival stamp
///   (the same read of the body): events that the provider, the network or the client's
///   scheduling joined count as one delivery, however many they are;
/// - *K* is the most answer tokens one delivery brought, and the *span* the time from the
///   first answer chunk's arrival to the last one's (what tokens/s divides by);
/// - an answer of N ≥ 2 tokens is buffered when one delivery brought all N, or when its span
///   is shorter than K × [`SPAN_MS_PER_DELIVERED_TOKEN`] (2 ms per token of the largest
///   delivery). A one-token answer has no speed to judge.
///
/// A cut on the span alone always has a provider sitting just above it: an answer held back
/// and written in two halves 0.5 ms apart reaches a loaded client anywhere from 0 to 15 ms
/// apart, and would time at thousands of tokens/s. Here the allowance grows with what arrived
/// at once: two halves of a 30-token answer must arrive 30 ms apart and three thirds 20 ms,
/// beyond a busy client's scheduling delays, while an answer streamed a token or a few at a
/// time needs 2 to 10 ms and one chunked but paced (a dozen tokens every 200 ms) far less than
/// it spans. The speed a kept answer shows, (N − 1) / span, is at most 500 × (N − 1) / K
/// tokens/s: a provider shows a speed only by spreading its answer over as many deliveries.
pub fn is_buffered(visible_answer_tokens: i64, chunks: &[AnswerChunk]) -> bool {
    let (Some(first), Some(last)) = (chunks.first(), chunks.last()) else { return false };
    if visible_answer_tokens < 2 {
        return false;
    }
    let largest = largest_delivery(chunks);
    largest >= visible_answer_tokens || last.offset_ms - first.offset_ms < SPAN_MS_PER_DELIVERED_TOKEN * largest as f64
}

/// The most answer tokens that chunks arriving together (the same arrival stamp) brought.
pub fn largest_delivery(chunks: &[AnswerChunk]) -> i64 {
    chunks
        .chunk_by(|a, b| a.offset_ms == b.offset_ms)
        .map(|delivery| delivery.iter().map(|c| c.tokens).sum())
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer `tests/fixtures/chunking-server.py` sends.
    const ANSWER: &str =
        "{\"answer\": \"alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike \
                          november oscar papa quebec romeo sierra tango uniform victor\"}";

    /// The answer cut at `cuts` (fractions of its length), each piece arriving at its stamp.
    fn pieces(cuts: &[f64], stamps: &[f64]) -> Vec<AnswerChunk> {
        let ends: Vec<usize> =
            cuts.iter().map(|f| (ANSWER.len() as f64 * f).round() as usize).chain([ANSWER.len()]).collect();
        answer_chunks(ANSWER, &stamps.iter().copied().zip(ends).collect::<Vec<_>>())
    }

    fn buffered(chunks: &[AnswerChunk]) -> bool {
        is_buffered(chunks.iter().map(|c| c.tokens).sum(), chunks)
    }

    /// Chunks of `sizes` tokens arriving at `stamps`.
    fn chunks(sizes: &[i64], stamps: &[f64]) -> Vec<AnswerChunk> {
        sizes.iter().zip(stamps).map(|(&tokens, &offset_ms)| AnswerChunk { offset_ms, tokens }).collect()
    }

    /// Delays a loaded client adds to a read's stamp, in ms.
    const JITTER: [f64; 8] = [0.0, 0.2, 0.7, 1.5, 3.0, 6.0, 9.0, 12.0];

    #[test]
    fn two_or_three_large_chunks_within_a_few_ms_are_buffered_however_the_reads_are_delayed() {
        let n = tokenizer::count(ANSWER) as i64;
        assert!(n >= 25, "{n}");
        for a in JITTER {
            for b in JITTER {
                // Held back 400 ms, then written in two halves 0.5 ms apart; each read is late
                // by its own delay, and a later read cannot arrive before an earlier one.
                let first = 400.0 + a;
                let second = (400.5 + b).max(first);
                let halves = pieces(&[0.5], &[first, second]);
                assert!(buffered(&halves), "halves at {first} and {second} ms: {halves:?}");
                for c in JITTER {
                    // Three thirds, written 1.5 ms apart.
                    let second = (401.5 + b).max(first);
                    let third = (403.0 + c).max(second);
                    let thirds = pieces(&[1.0 / 3.0, 2.0 / 3.0], &[first, second, third]);
                    assert!(buffered(&thirds), "thirds at {first}, {second}, {third} ms: {thirds:?}");
                }
            }
        }
        // An event just ahead of the flush that only began a token does not make it a stream.
        let lead = [AnswerChunk { offset_ms: 400.0, tokens: 0 }];
        let halves = pieces(&[0.5], &[409.0, 412.0]);
        assert!(buffered(&[&lead[..], &halves].concat()));
    }

    #[test]
    fn a_burst_of_small_chunks_read_together_is_one_delivery() {
        // 30 one-token events flushed at once arrive in two reads 10 ms apart.
        let stamps: Vec<f64> = (0..30).map(|i| if i < 15 { 400.0 } else { 410.0 }).collect();
        let burst = chunks(&[1; 30], &stamps);
        assert_eq!(largest_delivery(&burst), 15);
        assert!(buffered(&burst));
    }

    #[test]
    fn streamed_and_paced_answers_keep_their_speed() {
        // A word per chunk, 25 ms apart.
        let words = pieces(
            &(1..24).map(|i| i as f64 / 24.0).collect::<Vec<_>>(),
            &(0..24).map(|i| 100.0 + 25.0 * i as f64).collect::<Vec<_>>(),
        );
        assert!(!buffered(&words), "{words:?}");
        // Eight words a chunk, 200 ms apart.
        let bulk = pieces(&[1.0 / 3.0, 2.0 / 3.0], &[200.0, 400.0, 600.0]);
        assert!(bulk.iter().all(|c| c.tokens >= 6), "{bulk:?}");
        assert!(!buffered(&bulk));
        // A fast model: 40 tokens at 2,000 tokens/s, a token an event, and the same read four
        // events at a time by a busy client.
        let fast: Vec<f64> = (0..40).map(|i| 0.5 * i as f64).collect();
        assert!(!buffered(&chunks(&[1; 40], &fast)));
        let joined: Vec<f64> = (0..40).map(|i| 2.0 * (i / 4) as f64).collect();
        assert!(!buffered(&chunks(&[1; 40], &joined)));
        // A two-token answer streamed a token at a time, 2 ms apart.
        assert!(!buffered(&chunks(&[1, 1], &[10.0, 12.0])));
    }

    #[test]
    fn the_boundary_is_two_ms_per_token_of_the_largest_delivery() {
        let at = |span: f64| buffered(&chunks(&[3, 5, 2], &[10.0, 10.0 + span / 2.0, 10.0 + span]));
        assert!(!at(10.0), "5 tokens at once need 10 ms");
        assert!(at(9.99));
        // Chunks with the same stamp add up: 3 + 5 at 10 ms is a delivery of 8.
        let joined = |span: f64| buffered(&chunks(&[3, 5, 2], &[10.0, 10.0, 10.0 + span]));
        assert!(!joined(16.0) && joined(15.9));
        // One delivery that brought every token is buffered however long before it the
        // answer began (an event that only began a token).
        assert!(buffered(&chunks(&[0, 12], &[100.0, 900.0])));
        // Nothing to judge: no chunk, or a single token.
        assert!(!is_buffered(0, &[]));
        assert!(!buffered(&chunks(&[1], &[10.0])));
        assert!(!buffered(&chunks(&[0, 1], &[10.0, 10.0])));
    }
}
