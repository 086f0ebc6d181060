//! A load run's schedule: each arrival is a round, its item sent to every provider at the
//! same intended time (a paired step), its launch order rotated by one provider per arrival as
//! in the closed-loop rounds, so no provider is always handed its request first.
//!
//! The items are the selection's, families taking turns (meeting, ticket, contract, meeting,
//! …) as in the closed-loop schedule, and taken again from the first when every selected item
//! has been sent (a load step usually sends more requests than the selection holds; each
//! answer is still scored by its family's rubric). Arrival `g` of the run (counted across its
//! steps) takes item `g mod n`, so a step's items follow from where the step before ended.
//!
//! A synthetic workload sends no item of the selection: arrival `i` of step `s` is the
//! synthetic request `synthetic-s-i` (`workload.rs`), its prompt written into every provider's
//! row, so that `ib-fetch` sends what the schedule holds, byte for byte.
//!
//! Ids are content hashes as in the closed-loop schedule, with the step and the arrival's
//! index in them: `round-`/`req-` and 24 hex digits of a SHA-256 over the version of the
//! selection, [`ALGORITHM`], the step, the arrival, the family and the item (and the provider,
//! for a request).
use crate::arrivals::{self, Offsets};
use crate::rounds::short_hash;
use crate::workload::{self, Prompts};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::TaskFamily;
use inferbench_inputs::spec::{LoadPlan, StepTarget};
use inferbench_inputs::trace::Trace;

/// Part of every id: a change to how arrivals become rounds makes other ids.
pub const ALGORITHM: &str = "load-arrivals-paired-v1";

/// What one step holds.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSummary {
    pub arrivals: usize,
    /// A trace's arrivals at or after the step's end, not replayed.
    pub cut: usize,
}

/// The schedule of `plan`: `families` are each family's selected item ids in order, `providers`
/// the lock's, in their base launch order.
pub fn build(
    version: &str,
    plan: &LoadPlan,
    trace: Option<&Trace>,
    families: &[(TaskFamily, Vec<String>)],
    providers: &[String],
) -> (Vec<ScheduleRow>, Vec<StepSummary>) {
    let per_family = families.iter().map(|(_, ids)| ids.len()).min().unwrap_or(0);
    let items: Vec<(TaskFamily, &str)> =
        (0..per_family).flat_map(|i| families.iter().map(move |(family, ids)| (*family, ids[i].as_str()))).collect();
    let prompts = plan.workload.synthetic().map(|w| Prompts::new(plan.seed, w));
    // What arrival `arrival` (the run's count) sends, the `index`-th of its step.
    let what = |step: usize, index: usize, arrival: usize| -> Option<Sent> {
        match &prompts {
            Some(prompts) => {
                let recorded = trace.filter(|_| matches!(plan.steps[step], StepTarget::Speedup(_)));
                let request = prompts.request(step, index, recorded.and_then(|t| t.arrivals.get(index)));
                Some(Sent {
                    family: TaskFamily::Synthetic,
                    item_id: format!("synthetic-{step}-{index}"),
                    request: Some(request),
                })
            }
            None if items.is_empty() => None,
            None => {
                let (family, item_id) = items[arrival % items.len()];
                Some(Sent { family, item_id: item_id.to_string(), request: None })
            }
        }
    };
    let mut rows = Vec::new();
    let mut summaries = Vec::with_capacity(plan.steps.len());
    let mut arrival = 0usize;
    for step in 0..plan.steps.len() {
        if let StepTarget::Users(users) = plan.steps[step] {
            // A closed loop: request k of user u is round k × users + u, its item the next.
            let per_user = plan.requests_per_user.unwrap_or(0) as usize;
            summaries.push(StepSummary { arrivals: per_user * users as usize, cut: 0 });
            for index in 0..per_user * users as usize {
                let Some(sent) = what(step, index, arrival) else { continue };
                let user = (index % users as usize) as i64;
                push_round(&mut rows, version, arrival, providers, step, None, Some(user), sent);
                arrival += 1;
            }
            continue;
        }
        let Offsets { ns, cut } = arrivals::step(plan, step, trace);
        summaries.push(StepSummary { arrivals: ns.len(), cut });
        rows.reserve(ns.len() * providers.len());
        for (index, offset) in ns.into_iter().enumerate() {
            let Some(sent) = what(step, index, arrival) else { break };
            push_round(&mut rows, version, arrival, providers, step, Some(offset as i64), None, sent);
            arrival += 1;
        }
    }
    (rows, summaries)
}

/// What one round sends: a dataset item, or a synthetic request.
struct Sent {
    family: TaskFamily,
    item_id: String,
    request: Option<workload::Request>,
}

/// One round's rows: the item to every provider, the launch order rotated by the round.
#[allow(clippy::too_many_arguments)]
fn push_round(
    rows: &mut Vec<ScheduleRow>,
    version: &str,
    arrival: usize,
    providers: &[String],
    step: usize,
    intended_offset_ns: Option<i64>,
    user: Option<i64>,
    sent: Sent,
) {
    let Sent { family, item_id, request } = sent;
    let (step_text, arrival_text) = (step.to_string(), arrival.to_string());
    let parts = [version, ALGORITHM, &step_text, &arrival_text, family.as_str(), &item_id];
    let round_id = short_hash("round", &parts);
    let request_id = |provider: &str| {
        let mut request_parts = parts.to_vec();
        request_parts.insert(2, provider);
        short_hash("req", &request_parts)
    };
    let round = crate::rounds::round_rows(arrival, &round_id, family, &item_id, providers, request_id);
    rows.extend(round.map(|row| ScheduleRow {
        step: Some(step as i64),
        intended_offset_ns,
        user,
        target_input_tokens: request.as_ref().map(|r| i64::from(r.input_tokens)),
        target_output_tokens: request.as_ref().map(|r| i64::from(r.output_tokens)),
        prompt: request.as_ref().map(|r| r.prompt.clone()),
        ..row
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::vocab::{ArrivalProcess, LoadMode};
    use inferbench_inputs::spec::{Objectives, StepTarget};
    use std::collections::{BTreeMap, HashSet};

    fn plan(arrivals: ArrivalProcess, rates: &[f64], seconds: f64) -> LoadPlan {
        LoadPlan {
            mode: LoadMode::OpenLoop,
            arrivals,
            burstiness: None,
            trace: None,
            trace_name: None,
            steps: rates.iter().map(|r| StepTarget::Rate(*r)).collect(),
            search: None,
            concurrency_cap: None,
            requests_per_user: None,
            step_seconds: seconds,
            warmup_seconds: 0.0,
            cooldown_seconds: 0.0,
            seed: 3,
            workload: Default::default(),
            objectives: Objectives::default(),
        }
    }

    fn families() -> Vec<(TaskFamily, Vec<String>)> {
        TaskFamily::DATASET.iter().map(|f| (*f, (0..2).map(|i| format!("{f}-{i}")).collect())).collect()
    }

    fn providers() -> Vec<String> {
        ["a", "b", "c"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_provider_gets_the_same_item_at_the_same_intended_time() {
        let (rows, steps) =
            build("v", &plan(ArrivalProcess::Poisson, &[5.0, 10.0], 4.0), None, &families(), &providers());
        assert_eq!(rows.len(), steps.iter().map(|s| s.arrivals).sum::<usize>() * 3);
        let mut rounds: BTreeMap<i64, Vec<&ScheduleRow>> = BTreeMap::new();
        for row in &rows {
            rounds.entry(row.round_index).or_default().push(row);
        }
        for round in rounds.values() {
            let first = round[0];
            assert_eq!(round.len(), 3);
            assert!(round.iter().all(|r| (r.step, r.intended_offset_ns, &r.item_id, &r.round_id)
                == (first.step, first.intended_offset_ns, &first.item_id, &first.round_id)));
            let mut names: Vec<&str> = round.iter().map(|r| r.provider.as_str()).collect();
            names.sort();
            assert_eq!(names, ["a", "b", "c"]);
        }
        let unique: HashSet<&str> = rows.iter().map(|r| r.request_id.as_str()).collect();
        assert_eq!(unique.len(), rows.len(), "request ids are unique");
        assert!(rows.iter().all(|r| r.intended_offset_ns.unwrap() < 4_000_000_000));
        let in_step = |s: i64| rows.iter().filter(|r| r.step == Some(s)).count() / 3;
        assert_eq!((in_step(0), in_step(1)), (steps[0].arrivals, steps[1].arrivals));
    }

    #[test]
    fn items_take_turns_by_family_and_cycle_across_steps_and_launch_orders_rotate() {
        let (rows, _) = build("v", &plan(ArrivalProcess::Constant, &[2.0, 2.0], 2.0), None, &families(), &providers());
        let items: Vec<&str> = rows.chunks(3).map(|r| r[0].item_id.as_str()).collect();
        assert_eq!(
            items,
            [
                "meeting-notes-lookup-0",
                "ticket-triage-0",
                "contract-terms-extraction-0",
                "meeting-notes-lookup-1",
                "ticket-triage-1",
                "contract-terms-extraction-1",
                "meeting-notes-lookup-0",
                "ticket-triage-0"
            ]
        );
        let steps: Vec<i64> = rows.chunks(3).map(|r| r[0].step.unwrap()).collect();
        assert_eq!(steps, [0, 0, 0, 0, 1, 1, 1, 1]);
        let offsets: Vec<i64> = rows.chunks(3).map(|r| r[0].intended_offset_ns.unwrap()).collect();
        assert_eq!(
            offsets,
            [0, 500_000_000, 1_000_000_000, 1_500_000_000, 0, 500_000_000, 1_000_000_000, 1_500_000_000]
        );
        let second: Vec<&str> = rows[3..6].iter().map(|r| r.provider.as_str()).collect();
        assert_eq!(second, ["b", "c", "a"]);
        assert_eq!(rows[4].launch_index, 1);
    }

    #[test]
    fn the_schedule_is_a_function_of_its_inputs_and_the_ids_of_its_version() {
        let p = plan(ArrivalProcess::Poisson, &[3.0], 5.0);
        assert_eq!(build("v", &p, None, &families(), &providers()), build("v", &p, None, &families(), &providers()));
        let (a, _) = build("v", &p, None, &families(), &providers());
        let (b, _) = build("w", &p, None, &families(), &providers());
        assert_ne!(a[0].request_id, b[0].request_id);
        assert_eq!(a[0].intended_offset_ns, b[0].intended_offset_ns);
    }

    #[test]
    fn a_synthetic_round_sends_every_provider_the_same_prompt_of_its_lengths() {
        use inferbench_contract::documents::TokenLengths;
        use inferbench_contract::vocab::LengthDistribution;
        use inferbench_inputs::spec::{Synthetic, Workload};
        let mut p = plan(ArrivalProcess::Poisson, &[4.0, 8.0], 2.0);
        let uniform =
            |min, max| TokenLengths { distribution: LengthDistribution::Uniform, min, max, mean: None, stddev: None };
        p.workload = Workload::Synthetic(Synthetic {
            input_tokens: Some(uniform(20, 60)),
            output_tokens: Some(uniform(3, 9)),
            shared_prefix_tokens: 10,
            ignore_eos: false,
        });
        let (rows, steps) = build("v", &p, None, &families(), &providers());
        assert_eq!(rows.len(), steps.iter().map(|s| s.arrivals).sum::<usize>() * 3);
        for round in rows.chunks(3) {
            let first = &round[0];
            assert_eq!(first.task_family, TaskFamily::Synthetic);
            let index = first.round_index - rows.iter().find(|r| r.step == first.step).unwrap().round_index;
            assert_eq!(first.item_id, format!("synthetic-{}-{index}", first.step.unwrap()));
            assert!(round.iter().all(|r| (&r.prompt, r.target_input_tokens, r.target_output_tokens, &r.item_id)
                == (&first.prompt, first.target_input_tokens, first.target_output_tokens, &first.item_id)));
            let prompt = first.prompt.as_deref().unwrap();
            assert_eq!(inferbench_judge::tokenizer::count(prompt) as i64, first.target_input_tokens.unwrap());
            assert!((3..=9).contains(&first.target_output_tokens.unwrap()));
        }
        let prefix: Vec<&str> = rows.iter().map(|r| r.prompt.as_deref().unwrap()).collect();
        let shared = inferbench_judge::tokenizer::decode_bytes(&inferbench_judge::tokenizer::encode(prefix[0])[..10]);
        assert!(prefix.iter().all(|p| p.as_bytes().starts_with(&shared)), "the first 10 tokens are every prompt's");
        let (again, _) = build("v", &p, None, &families(), &providers());
        assert_eq!(again, rows, "a function of the plan");
        // A replayed trace's sizes are sent where its lines give them.
        let trace = Trace::read(
            "{\"offset_ms\": 0, \"input_tokens\": 500, \"output_tokens\": 7}\n{\"offset_ms\": 10}".as_bytes(),
            "t",
        )
        .unwrap();
        p.arrivals = ArrivalProcess::Trace;
        p.steps = vec![StepTarget::Speedup(1.0)];
        let (rows, _) = build("v", &p, Some(&trace), &families(), &providers());
        assert_eq!((rows[0].target_input_tokens, rows[0].target_output_tokens), (Some(500), Some(7)));
        assert!((20..=60).contains(&rows[3].target_input_tokens.unwrap()), "the spec's, for a line without");
    }
}
