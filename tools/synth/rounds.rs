//! The events of each round, in order: its release, each request's `request_started` and the
//! events `plan.rs` gives its stream, interleaved by arrival, and its close; with the run
//! clock that moves from round to round and the tally the summary reports.
use crate::args::Args;
use crate::plan::{self, Request};
use crate::profiles::Shape;
use crate::shares::{Class, Shares, Stratifier};
use crate::summary::Summary;
use anyhow::Result;
use inferbench_contract::event::{Event, RequestStarted, RoundClosed, RoundReleased};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::TaskFamily;
use inferbench_contract::{Error, USER_AGENT};
use inferbench_inputs::dataset::{Dataset, Item};
use inferbench_inputs::providers::{simulated_endpoint, slug, Auth, Provider};
use inferbench_inputs::spec::Spec;
use inferbench_judge::tokenizer;
use inferbench_sim::answer::{self, Chunks};
use inferbench_sim::dataset as sim;
use inferbench_stats::rng::{key, SplitMix64};
use inferbench_store::pipeline::Pipeline;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The run clock between one round's close and the next round's release, and between the
/// release and the first send: a fetch's scheduling overhead on a fast machine.
const ROUND_GAP_NS: u64 = 20_000;
const FIRST_SEND_NS: u64 = 5_000;
/// Between two sends of one round (the launch order).
const LAUNCH_STEP_NS: u64 = 2_000;

/// The planner of every round of a run, and what it has planned so far.
pub struct Rounds<'a> {
    args: &'a Args,
    spec: &'a Spec,
    deadline_ns: u64,
    providers: HashMap<&'a str, (&'a Provider, &'a Shape)>,
    items: HashMap<(&'a str, &'a str), &'a Item>,
    wrong: WrongMeeting,
    stratifiers: HashMap<&'a str, Stratifier>,
    counters: HashMap<&'a str, u64>,
    reasoning_cache: HashMap<(usize, usize), Chunks>,
    system_tokens: HashMap<String, usize>,
    empty: sim::Dataset,
    /// The run time of the next round's release; after the last round, of the log's end.
    pub clock: u64,
    /// Requests and rounds planned, by outcome class and answer.
    pub summary: Summary,
}

/// The round being planned: its item, as the model answers it.
struct ThisRound<'r> {
    item: &'r Item,
    sim_item: &'r sim::Item,
    gold: String,
    gold_chunks: HashMap<usize, Chunks>,
    prompt_tokens: usize,
}

impl<'a> Rounds<'a> {
    /// Checks that every scheduled request names an item of the dataset and a provider of
    /// the lock, with `shapes` in the lock's provider order.
    pub fn new(
        args: &'a Args,
        shares: &Shares,
        pipeline: &'a Pipeline,
        shapes: &'a [Shape],
        data: &'a Dataset,
        schedule: &[ScheduleRow],
    ) -> Result<Rounds<'a>> {
        let names = &pipeline.lock.providers;
        let providers: HashMap<&str, (&Provider, &Shape)> = names
            .iter()
            .zip(shapes)
            .filter_map(|(name, shape)| pipeline.providers.get(name).map(|p| (name.as_str(), (p, shape))))
            .collect();
        let items: HashMap<(&str, &str), &Item> =
            data.items.values().flatten().map(|i| ((i.family.as_str(), i.id.as_str()), i)).collect();
        for row in schedule {
            if !items.contains_key(&(row.task_family.as_str(), row.item_id.as_str()))
                || !providers.contains_key(row.provider.as_str())
            {
                let at = pipeline.run.schedule();
                return Err(Error::bad(format!(
                    "{}: request {}: unknown item or provider",
                    at.display(),
                    row.request_id
                ))
                .into());
            }
        }
        let spec = &pipeline.spec;
        Ok(Rounds {
            args,
            spec,
            deadline_ns: (spec.inference.timeout_seconds * 1e9) as u64,
            providers,
            items,
            wrong: WrongMeeting::new(data.items.values().flatten()),
            stratifiers: names.iter().map(|n| (n.as_str(), Stratifier::new(args.seed, n, shares))).collect(),
            counters: HashMap::new(),
            reasoning_cache: HashMap::new(),
            system_tokens: HashMap::new(),
            empty: sim::Dataset::default(),
            clock: ROUND_GAP_NS,
            summary: Summary::default(),
        })
    }

    /// The spec's deadline of one request.
    pub fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }

    /// The events of one round (the schedule's rows of one round, in launch order); the clock
    /// moves past it.
    pub fn round(&mut self, round: &'a [ScheduleRow]) -> Vec<(u64, Event)> {
        let first = &round[0];
        let item = self.items[&(first.task_family.as_str(), first.item_id.as_str())];
        let sim_items = sim::Dataset::from_items(std::iter::once(item));
        let sim_item = &sim_items.items()[0];
        let system = *self.system_tokens.entry(item.system.clone()).or_insert_with(|| tokenizer::count(&item.system));
        let prompt_tokens = 3 + (3 + system) + (3 + tokenizer::count(&item.user));
        let gold = answer::render(&sim_item.gold);
        let mut this = ThisRound { item, sim_item, gold, gold_chunks: HashMap::new(), prompt_tokens };
        let clock = self.clock;

        let mut events: Vec<(u64, Event)> = Vec::with_capacity(round.len() * 64 + 2);
        events.push((
            clock,
            Event::RoundReleased(RoundReleased {
                round_id: first.round_id.clone(),
                round_index: first.round_index as u64,
                request_ids: round.iter().map(|r| r.request_id.clone()).collect(),
                nonce: None,
            }),
        ));
        let mut sends = Vec::with_capacity(round.len());
        for (i, row) in round.iter().enumerate() {
            let send = clock + FIRST_SEND_NS + LAUNCH_STEP_NS * i as u64;
            sends.push(send);
            self.request(row, &mut this, send, &mut events);
        }
        // Interleaved by arrival, as the requests of a round stream at once; a stable sort
        // keeps each request's own order for events of the same instant.
        events.sort_by_key(|(t, _)| *t);
        let end = events.last().map(|(t, _)| *t).unwrap_or(clock);
        let skew = sends.last().copied().unwrap_or(0) - sends.first().copied().unwrap_or(0);
        events.push((
            end + 1_000,
            Event::RoundClosed(RoundClosed {
                round_id: first.round_id.clone(),
                round_index: first.round_index as u64,
                launch_skew_ns: skew,
                resumed_partial_round: false,
            }),
        ));
        self.clock = end + 1_000 + ROUND_GAP_NS;
        self.summary.rounds += 1;
        self.summary.requests += round.len() as u64;
        events
    }

    /// One request sent at `send`: its class, answer and reasoning drawn, its
    /// `request_started` and its stream's events appended to `events`.
    fn request(&mut self, row: &'a ScheduleRow, this: &mut ThisRound, send: u64, events: &mut Vec<(u64, Event)>) {
        let (provider, shape) = self.providers[row.provider.as_str()];
        let counter = self.counters.entry(row.provider.as_str()).or_insert(0);
        let n = *counter;
        *counter += 1;
        let class = self.stratifiers.get_mut(row.provider.as_str()).map(|s| s.class(n)).unwrap_or(Class::Completed);
        let mut rng = SplitMix64::new(self.args.seed ^ key(&row.request_id));
        let accuracy = self.args.accuracy.unwrap_or(shape.accuracy);
        let correct = rng.next_f64() < accuracy;
        let tpc = shape.tokens_per_chunk;
        let wrong_chunks = (!correct).then(|| {
            let text = match self.wrong.pick(this.item, &mut rng) {
                Some(text) => text,
                None => answer::render(&answer::wrong_gold(this.sim_item, &self.empty, &mut rng)),
            };
            answer::tokenize(&text, tpc)
        });
        let answer_chunks = match &wrong_chunks {
            Some(chunks) => chunks,
            None => &*this.gold_chunks.entry(tpc).or_insert_with(|| answer::tokenize(&this.gold, tpc)),
        };
        let reasoning_tokens = if shape.reasoning_mean > 0.0 {
            let lo = (shape.reasoning_mean * 0.5).round().max(1.0) as usize;
            let hi = ((shape.reasoning_mean * 1.5).round() as usize).max(lo);
            lo + rng.below_modulo(hi - lo + 1)
        } else {
            0
        };
        let reasoning = self
            .reasoning_cache
            .entry((reasoning_tokens, tpc))
            .or_insert_with(|| answer::reasoning(reasoning_tokens, tpc, false));
        events.push((
            send,
            Event::RequestStarted(RequestStarted {
                request_id: row.request_id.clone(),
                attempt: 1,
                round_id: row.round_id.clone(),
                round_index: row.round_index as u64,
                provider: row.provider.clone(),
                task_family: row.task_family,
                item_id: row.item_id.clone(),
                endpoint: simulated_endpoint("http://127.0.0.1", &provider.name, provider.api(self.spec.inference.api)),
                api: provider.api(self.spec.inference.api),
                body: provider.body(self.spec, &this.item.system, &this.item.user),
                headers: request_headers(provider),
                step: None,
                target_input_tokens: None,
                target_output_tokens: None,
                released_t_ns: None,
                intended_t_ns: self.clock,
            }),
        ));
        let provider_slug = slug(&provider.name);
        let req = Request {
            request_id: &row.request_id,
            api: provider.api(self.spec.inference.api),
            slug: &provider_slug,
            counter: n,
            model: &provider.model_id,
            shape,
            class,
            answer: answer_chunks,
            reasoning,
            prompt_tokens: this.prompt_tokens,
            usage: provider.stream_usage,
            time_scale: self.args.time_scale,
            deadline_ns: self.deadline_ns,
        };
        for (offset, event) in plan::plan(&req, &mut rng) {
            events.push((send + offset, event));
        }
        *self.summary.outcomes.entry(class.operational().as_str()).or_insert(0) += 1;
        self.summary.correct_answers += u64::from(class == Class::Completed && correct);
    }
}

/// The headers `ib-fetch` sends and logs: its fixed ones, and the credential headers of the
/// provider's auth, redacted.
fn request_headers(provider: &Provider) -> BTreeMap<String, String> {
    let mut headers: BTreeMap<String, String> = [
        ("Accept", "text/event-stream"),
        ("Accept-Encoding", "identity"),
        ("Content-Type", "application/json"),
        ("User-Agent", USER_AGENT),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    match &provider.auth {
        Auth::Bearer { .. } => {
            headers.insert("Authorization".to_string(), "<redacted>".to_string());
        }
        Auth::Headers { headers: named } => {
            for name in named.keys() {
                headers.insert(name.clone(), "<redacted>".to_string());
            }
        }
    }
    headers
}

/// Wrong meeting-notes answers in constant time: the values stated in other notes, by kind
/// (ib-sim's `answer::wrong_gold` scans the whole dataset for each, which a dataset of a
/// hundred thousand items cannot afford a million times).
struct WrongMeeting {
    by_kind: HashMap<String, Vec<String>>,
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

impl WrongMeeting {
    fn new<'a>(items: impl Iterator<Item = &'a Item>) -> WrongMeeting {
        let mut by_kind: HashMap<String, Vec<String>> = HashMap::new();
        for item in items.filter(|i| i.family == TaskFamily::MeetingNotesLookup) {
            if let (Some(kind), Some(value)) = (item.gold["type"].as_str(), item.gold["value"].as_str()) {
                by_kind.entry(kind.to_string()).or_default().push(value.to_string());
            }
        }
        WrongMeeting { by_kind }
    }

    /// A value of the same kind from another note that is neither the gold nor an alias;
    /// `None` for the other families, or when no such value is found in a few draws.
    fn pick(&self, item: &Item, rng: &mut SplitMix64) -> Option<String> {
        let value = item.gold.get("value").and_then(Value::as_str)?;
        let kind = item.gold.get("type").and_then(Value::as_str)?;
        let values = self.by_kind.get(kind).filter(|v| !v.is_empty())?;
        let taken: Vec<String> =
            std::iter::once(value).chain(item.aliases.iter().map(String::as_str)).map(norm).collect();
        for _ in 0..16 {
            let candidate = &values[rng.below_modulo(values.len())];
            if !taken.contains(&norm(candidate)) {
                return Some(format!("{{\"answer\":{}}}", Value::from(candidate.as_str())));
            }
        }
        None
    }
}
