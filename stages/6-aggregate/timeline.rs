//! A load step's course over time (`metrics.json` `load.timelines`): what was sent, what
//! completed or failed, and the most requests in flight, in bins from the step's opening.
use crate::facts::LoadFacts;
use inferbench_contract::documents::StepTimeline;
use inferbench_contract::vocab::Outcome;

/// The bin lengths a timeline may take, s: the shortest that leaves at most [`MAX_BINS`].
const BIN_SECONDS: &[f64] =
    &[0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0];
/// Few enough that a bin holds several requests at the rates a step is likely to run at (a
/// finer bin shows the arrivals' spacing, not the step's course), enough to see it change.
pub const MAX_BINS: usize = 40;

/// The timeline of one step from `opened_t_ns` (its `step_opened`, or its first send),
/// over the step's requests.
pub fn timeline(step: u32, opened_t_ns: i64, requests: &[&LoadFacts]) -> StepTimeline {
    let end = requests.iter().map(|r| r.ended_t_ns.max(r.started_t_ns)).max().unwrap_or(opened_t_ns);
    let span = (end - opened_t_ns).max(0) as f64 / 1e9;
    let bin_seconds = BIN_SECONDS
        .iter()
        .copied()
        .find(|b| ((span / b).floor() as usize) < MAX_BINS)
        .unwrap_or(*BIN_SECONDS.last().unwrap_or(&3600.0));
    // Past 40 hours the last bin holds the rest.
    let bins = ((span / bin_seconds).floor() as usize + 1).min(MAX_BINS);
    let bin_ns = (bin_seconds * 1e9).round() as i64;
    let bin_of = |t: i64| (((t - opened_t_ns).max(0) / bin_ns) as usize).min(bins - 1);
    let mut line = StepTimeline {
        step,
        bin_seconds,
        sent: vec![0; bins],
        completed: vec![0; bins],
        failed: vec![0; bins],
        in_flight: vec![0; bins],
    };
    // Sends and ends in time order, an end before a send at the same instant: a request that
    // ended as another was sent did not overlap it.
    let mut changes: Vec<(i64, i64)> = Vec::with_capacity(requests.len() * 2);
    for r in requests {
        line.sent[bin_of(r.started_t_ns)] += 1;
        let ended = r.ended_t_ns.max(r.started_t_ns);
        if r.outcome == Outcome::Completed {
            line.completed[bin_of(ended)] += 1;
        } else {
            line.failed[bin_of(ended)] += 1;
        }
        changes.push((r.started_t_ns, 1));
        changes.push((ended, -1));
    }
    changes.sort_unstable();
    let (mut now, mut at) = (0i64, 0usize);
    for (bin, peak) in line.in_flight.iter_mut().enumerate() {
        // What was in flight as the bin opened, then every count it reached within it.
        let bin_start = opened_t_ns + bin as i64 * bin_ns;
        let bin_end = bin_start + bin_ns;
        while at < changes.len() && changes[at].0 <= bin_start {
            now += changes[at].1;
            at += 1;
        }
        let mut most = now;
        while at < changes.len() && (changes[at].0 < bin_end || bin == bins - 1) {
            now += changes[at].1;
            most = most.max(now);
            at += 1;
        }
        *peak = most.max(0) as u64;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(started_ms: i64, ended_ms: i64, outcome: Outcome) -> LoadFacts {
        LoadFacts {
            request_id: format!("r{started_ms}"),
            provider: "a".into(),
            step: Some(0),
            operational_outcome: inferbench_contract::vocab::OperationalOutcome::of(outcome, Some(200)),
            outcome,
            complete: outcome == Outcome::Completed,
            ttfo_ms: None,
            ttfa_ms: None,
            e2e_latency_ms: None,
            visible_answer_tokens: 0,
            output_tokens_per_second: None,
            started_t_ns: started_ms * 1_000_000,
            intended_t_ns: started_ms * 1_000_000,
            released_t_ns: None,
            ended_t_ns: ended_ms * 1_000_000,
            answer_chunk_ms: Vec::new(),
            answer_chunk_tokens: Vec::new(),
            answer_buffered: false,
        }
    }

    #[test]
    fn sends_ends_and_the_most_in_flight_are_counted_per_bin() {
        // Opened at 1 s; a 2.5 s span takes 0.1 s bins (26 of them).
        let rs = [
            request(1_000, 1_250, Outcome::Completed),
            request(1_050, 1_120, Outcome::Timeout),
            request(1_100, 3_500, Outcome::Completed),
            request(1_250, 1_300, Outcome::Completed),
        ];
        let refs: Vec<&LoadFacts> = rs.iter().collect();
        let t = timeline(3, 1_000_000_000, &refs);
        assert_eq!((t.step, t.bin_seconds, t.sent.len()), (3, 0.1, 26), "26 bins of 0.1 s fit in 40");
        assert_eq!(&t.sent[..3], [2, 1, 1]);
        assert_eq!((t.failed[1], t.completed[2], t.completed[3], t.completed[25]), (1, 1, 1, 1));
        assert_eq!(&t.in_flight[..4], [2, 3, 2, 1], "the end at 1.25 s comes before the send at 1.25 s");
        assert_eq!(t.in_flight[24], 1);
        assert_eq!(t.sent.iter().sum::<u64>(), 4);
        assert_eq!(t.completed.iter().sum::<u64>() + t.failed.iter().sum::<u64>(), 4);
    }

    #[test]
    fn a_long_step_takes_longer_bins_and_never_more_than_the_most() {
        let rs = [request(0, 10, Outcome::Completed), request(3_599_000, 3_600_000, Outcome::Completed)];
        let refs: Vec<&LoadFacts> = rs.iter().collect();
        let t = timeline(0, 0, &refs);
        assert_eq!(t.bin_seconds, 120.0, "an hour in two-minute bins: minutes would be 61");
        assert!(t.sent.len() <= MAX_BINS);
        let empty = timeline(1, 5, &[]);
        assert_eq!((empty.sent, empty.in_flight), (vec![0], vec![0]));
    }
}
