//! The page's table views: the leaderboard, the rankings by tokens/s, by the E2E p99 tail and
//! by time to first answer token, accuracy and failures by class, one provider against
//! another, the failure log and the provenance. Figures come from `metrics.json` and
//! `comparisons.json` through `Page::metric` and `Page::comparison`, which mark each with its
//! pointer; the few derived numbers (Δ vs the fastest) say what they were derived from.
use super::{format_number, view, Kind, Page, Provider};
use inferbench_contract::metrics::{
    self, Column, Metric, E2E_LATENCY, FAILURE, OUTPUT_TOKENS_PER_SECOND, PRE_ANSWER_REASONING_TOKENS,
    REASONING_EMISSION, TASK_SUCCESS, TIMEOUT, TTFA, TTFO,
};
use inferbench_contract::vocab::{EndpointMode, OperationalOutcome};
use inferbench_present::html::{attr, text, Element};
use inferbench_present::number::{self, Between, DASH};
use std::cmp::Ordering;

/// Columns whose cells are words, not figures: left-aligned.
const TEXT_COLUMNS: [&str; 14] = [
    "Provider",
    "Status",
    "Family",
    "Class",
    "Error type",
    "Message",
    "Request",
    "Retry-After",
    "Compared",
    "File",
    "SHA-256",
    "Input",
    "Figure",
    "Samples",
];

/// A table in its own horizontally scrolling container; `cells` are markup. The provider (or
/// figure, file) column heads each row.
pub fn table(caption: &str, headers: &[&str], rows: &[Vec<String>]) -> String {
    // A long table scrolls within its own height, so the views after it stay in reach.
    let tall = rows.len() > super::CHART_PROVIDERS;
    let mut t = String::from(if tall { "<div class=\"scroll tall\"><table>" } else { "<div class=\"scroll\"><table>" });
    if !caption.is_empty() {
        t.push_str(&Element::new("caption").text(caption).close());
    }
    let row_header = headers.iter().position(|h| ["Provider", "Figure", "File", "Input"].contains(h));
    let class = |i: usize| {
        if Some(i) == row_header || TEXT_COLUMNS.contains(&headers[i]) {
            " class=\"l\""
        } else {
            ""
        }
    };
    t.push_str("<thead><tr>");
    for (i, h) in headers.iter().enumerate() {
        // Class names (`other_http_4xx`) may break after an underscore.
        t.push_str(&format!("<th scope=\"col\"{}>{}</th>", class(i), text(h).replace('_', "_<wbr>")));
    }
    t.push_str("</tr></thead><tbody>");
    if rows.is_empty() {
        t.push_str(&format!("<tr><td colspan=\"{}\" class=\"l\">none</td></tr>", headers.len()));
    }
    for row in rows {
        t.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let tag = if Some(i) == row_header { "th scope=\"row\"" } else { "td" };
            let close = if Some(i) == row_header { "th" } else { "td" };
            t.push_str(&format!("<{tag}{}>{cell}</{close}>", class(i)));
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table></div>");
    t
}

/// Long text in a table cell: wraps, within a readable width.
pub(super) fn wide(markup: &str) -> String {
    format!("<div class=\"wide\">{markup}</div>")
}

/// A provider's name as shown: its label, with its id when they differ.
pub fn name(p: &Provider) -> String {
    let plain = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase();
    if plain(p.label) == plain(p.id) {
        text(p.label)
    } else {
        format!("{} <small>{}</small>", text(p.label), text(p.id))
    }
}

/// The run in two sentences, above the views.
pub fn header(page: &Page) -> String {
    let i = page.inputs;
    let mode = match i.execution.endpoint_mode {
        Some(EndpointMode::Simulated) => "simulated providers (ib-sim), not the real endpoints",
        Some(EndpointMode::Imported) => "records imported from the reference runner",
        Some(EndpointMode::Providers) => "the providers' real endpoints",
        None => "no provider (nothing was fetched)",
    };
    let rounds = match page.comparisons.pointer("/fastest_provider_wins/0/total_round_count") {
        Some(_) => {
            format!(", {} paired rounds", page.comparison("/fastest_provider_wins/0/total_round_count", Kind::Count))
        }
        None => String::new(),
    };
    let mut out = Element::new("h1").text(&i.spec.name).close();
    out.push_str(
        &Element::new("p")
            .a("class", "lede")
            .raw(&format!(
                "Run <code>{}</code>: {} providers serving {}, {} task families{rounds}, measured against {}. Every \
                 figure below is read from the run's metrics.json and comparisons.json; the distributions, the \
                 timeline and the paired differences are drawn from its responses.",
                text(&i.lock.run_id),
                page.providers.len(),
                text(&i.spec.model),
                page.families.len(),
                text(mode),
            ))
            .close(),
    );
    // The sentence on cache busting, when it is on, without report.md's code marks.
    if let Some(sentence) = crate::cache::busting(&i.spec) {
        out.push_str(&Element::new("p").text(&sentence.replace('`', "")).close());
    }
    out
}

/// Providers ordered by a pooled figure, best first (`None` last, then by metrics.json order).
fn ordered<'p>(page: &'p Page, column: Column) -> Vec<&'p Provider<'p>> {
    let mut v: Vec<&Provider> = page.providers.iter().collect();
    v.sort_by(|a, b| {
        let (x, y) = (page.value(&page.pooled(a, column)), page.value(&page.pooled(b, column)));
        match (x, y) {
            (Some(x), Some(y)) => {
                let o = x.total_cmp(&y);
                if column.metric.lower_is_better() {
                    o
                } else {
                    o.reverse()
                }
            }
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
        .then(a.row.cmp(&b.row))
    });
    v
}

/// `population/submitted` of a percentile metric's samples, both marked.
fn samples(page: &Page, p: &Provider, metric: &Metric) -> String {
    let summary = metric.summary.unwrap_or(metric.name);
    format!(
        "{} of {}",
        page.metric(&page.pooled(p, format!("{summary}/population_count")), Kind::Count),
        page.metric(&page.pooled(p, "submitted_count"), Kind::Count)
    )
}

/// Why a provider is not ranked, with what the run showed; empty when it is eligible.
fn reasons(page: &Page, p: &Provider) -> Vec<String> {
    let row = &page.metrics["combined_provider_metrics"][p.row];
    if row["eligible"].as_bool() == Some(true) {
        return Vec::new();
    }
    let details = row["ineligibility_details"].as_array().filter(|d| !d.is_empty());
    let reasons = details.or(row["ineligibility_reasons"].as_array());
    reasons.into_iter().flatten().filter_map(|r| r.as_str()).map(str::to_string).collect()
}

/// Eligible, or a pointer to the reasons listed under the table.
fn status(page: &Page, p: &Provider) -> String {
    match reasons(page, p).is_empty() {
        true => "eligible".to_string(),
        false => format!("<a class=\"ineligible\" href=\"#why-{}\">not ranked</a>", attr(p.id)),
    }
}

/// The reasons of every unranked provider, as a list under the leaderboard.
fn reason_list(page: &Page) -> String {
    let items: String = page
        .providers
        .iter()
        .filter_map(|p| {
            let r = reasons(page, p);
            (!r.is_empty()).then(|| {
                format!(
                    "<li id=\"why-{}\"><strong>{}</strong>: {}</li>",
                    attr(p.id),
                    text(p.label),
                    text(&r.join("; "))
                )
            })
        })
        .collect();
    match items.is_empty() {
        true => String::new(),
        false => format!("<p class=\"note\">Why a provider is not ranked:</p><ul class=\"reasons\">{items}</ul>"),
    }
}

/// The leaderboard's figures between the provider and its cost.
const LEADERBOARD: [Column; 6] = [
    metrics::RANKING,
    E2E_LATENCY.at(50),
    TTFA.at(95),
    OUTPUT_TOKENS_PER_SECOND.at(50),
    TASK_SUCCESS.value(),
    FAILURE.value(),
];

/// Short headings of `columns`.
fn headings(columns: &[Column]) -> Vec<String> {
    columns.iter().map(Column::short_heading).collect()
}

/// A provider's pooled figures of `columns`, marked.
fn figures(page: &Page, p: &Provider, columns: &[Column]) -> Vec<String> {
    columns.iter().map(|c| page.pooled_figure(p, *c)).collect()
}

/// A provider's rank, followed by the range it shares with neighbours the run cannot tell
/// apart from it, when that range spans more than its own rank.
fn rank_cell(page: &Page, p: &Provider) -> String {
    let rank = page.metric(&page.pooled(p, "rank"), Kind::Count);
    let range = page.pooled(p, "rank_range");
    let (first, last) = (page.value(&format!("{range}/first")), page.value(&format!("{range}/last")));
    match (first, last) {
        (Some(first), Some(last)) if first != last => format!(
            "{rank} <span class=\"ci\">({}–{})</span>",
            page.metric(&format!("{range}/first"), Kind::Count),
            page.metric(&format!("{range}/last"), Kind::Count)
        ),
        _ => rank,
    }
}

/// Adjacent ranked providers: told apart by the run or not, and about how many rounds would.
fn separation_table(page: &Page) -> String {
    let Some(pairs) = page.metrics["rank_separation"].as_array().filter(|p| !p.is_empty()) else {
        return String::new();
    };
    let rows: Vec<Vec<String>> = pairs
        .iter()
        .enumerate()
        .map(|(i, pair)| {
            let at = |key: &str| format!("/rank_separation/{i}/{key}");
            let name =
                |key: &str| text(crate::labels::label(pair[key].as_str().unwrap_or_default(), &page.inputs.table));
            vec![
                name("better"),
                name("worse"),
                page.metric(&at("shared_rounds"), Kind::Count),
                format!(
                    "{} {}",
                    page.metric(&at("difference"), Kind::DiffMs),
                    number::interval(
                        &page.metric(&at("lower"), Kind::DiffMs),
                        &page.metric(&at("upper"), Kind::DiffMs),
                        Between::SpacedEnDash
                    )
                ),
                match (pair["distinguishable"].as_bool(), pair["shared_rounds"].as_i64(), pair["min_rounds"].as_i64()) {
                    (Some(true), _, _) => "yes".to_string(),
                    (_, Some(n), Some(min)) if n < min => format!("no: fewer than {min} rounds"),
                    _ => "no".to_string(),
                },
                page.metric(&at("rounds_to_separate"), Kind::Count),
            ]
        })
        .collect();
    let headers =
        ["Better", "Next", "Shared rounds", "E2E p99 difference [95 %]", "Told apart", "Rounds to tell apart (about)"];
    format!(
        "{}<p class=\"note\">A seeded paired bootstrap over the rounds both providers completed, on the ranking key. \
         Where the 95 % interval holds zero, or the shared rounds are fewer than a p99 needs for any 95 % \
         interval (299), the run cannot order the pair, and they share a rank range. The rounds \
         to tell them apart are projected from the resampled differences' spread (it shrinks as 1/√rounds).</p>",
        table("Which ranks the run tells apart", &headers, &rows)
    )
}

pub fn leaderboard(page: &Page) -> String {
    let mut headers = vec!["Rank".to_string(), "Provider".to_string()];
    headers.extend(headings(&LEADERBOARD));
    headers.extend(["Cost".to_string(), format!("{} samples", E2E_LATENCY.short_label), "Status".to_string()]);
    let rows: Vec<Vec<String>> = page
        .providers
        .iter()
        .map(|p| {
            let m = |key: &str, kind| page.metric(&page.pooled(p, key), kind);
            let mut cells = vec![rank_cell(page, p), name(p)];
            cells.extend(LEADERBOARD.iter().map(|c| page.pooled_figure_with_interval(p, *c)));
            cells.extend([m("cost/total_cost_usd", Kind::Usd), samples(page, p, E2E_LATENCY), status(page, p)]);
            cells
        })
        .collect();
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let policy = format!(
        "Ranked by the lowest pooled end-to-end p99 among eligible providers: task success of at least {} and an \
         operational failure rate of at most {}. Unranked providers (rank —) follow, with the reason. Cost is unknown \
         unless every response reported its token usage.",
        page.metric("/eligibility/min_task_success_rate", Kind::Rate),
        page.metric("/eligibility/max_failure_rate", Kind::Rate),
    );
    view(
        "leaderboard",
        "Which LLM inference provider ranks first? The leaderboard",
        "One row per provider, best first. Lower latency is better, higher tokens per second and task success are \
         better; the balanced pooled figures weigh every task family equally.",
        &format!(
            "{}<p class=\"note\">{policy} Brackets hold 95 % confidence intervals (order statistics for a \
             percentile, Wilson for a rate); † marks a percentile with too few samples for one (hover for why).</p>{}{}",
            table("", &headers, &rows),
            reason_list(page),
            separation_table(page)
        ),
    )
}

/// The tokens/s view's figures after the speed and its gap to the fastest: the slow-tail
/// floors, then the two waits a fast stream can still hide.
const SPEED_FIGURES: [Column; 4] =
    [OUTPUT_TOKENS_PER_SECOND.at(95), OUTPUT_TOKENS_PER_SECOND.at(99), TTFA.at(95), E2E_LATENCY.at(99)];

pub fn tokens_per_second(page: &Page) -> String {
    let key = OUTPUT_TOKENS_PER_SECOND.at(50);
    let order = ordered(page, key);
    let fastest = order.first().and_then(|p| page.value(&page.pooled(p, key)).map(|v| (p, v)));
    let rows: Vec<Vec<String>> = order
        .iter()
        .map(|p| {
            let delta = match (page.value(&page.pooled(p, key)), fastest) {
                (Some(v), Some((f, best))) => Element::new("span")
                    .a("data-derived", "difference")
                    .a("data-of", format!("{} {}", page.pooled(p, key), page.pooled(f, key)))
                    .text(&format_number(v - best, Kind::Tps))
                    .close(),
                _ => DASH.to_string(),
            };
            let mut cells = vec![name(p), page.pooled_figure(p, key), delta];
            cells.extend(figures(page, p, &SPEED_FIGURES));
            cells.push(samples(page, p, OUTPUT_TOKENS_PER_SECOND));
            cells
        })
        .collect();
    let mut headers = vec!["Provider".to_string(), key.short_heading(), "Δ vs fastest p50".to_string()];
    headers.extend(headings(&SPEED_FIGURES));
    headers.push("Samples".to_string());
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let streaming = answer_streaming(page, &order);
    let why = "Why a fast stream can still start slowly: tokens per second is measured from the first visible answer \
               token to the last, so it leaves out the wait before the answer begins (queueing, prefill, hidden \
               reasoning). A provider can stream quickly once it starts and still keep the user waiting for the start: \
               read its TTFA p95 and E2E p99 beside its speed.";
    view(
        "tokens-per-second",
        "Fastest LLM inference API by tokens per second",
        "Ordered by median visible-answer tokens per second, higher is better. The p95 and p99 columns are slow-speed \
         floors: 95% and 99% of complete responses streamed at least that fast. Samples are complete responses.",
        &format!("{}<p class=\"note\">{}</p>{streaming}", table("", &headers, &rows), text(why)),
    )
}

/// How each provider's complete answers streamed, and the buffered answers that are no speed
/// sample under inferbench's rules.
fn answer_streaming(page: &Page, order: &[&Provider]) -> String {
    let at = |p: &Provider, key: &str| page.pooled(p, format!("stream_diagnostics/answer_streaming/{key}"));
    let rows: Vec<Vec<String>> = order
        .iter()
        .map(|p| {
            vec![
                name(p),
                page.metric(&at(p, "answer_count"), Kind::Count),
                page.metric(&at(p, "chunks_per_answer/p50"), Kind::Count),
                page.metric(&at(p, "tokens_per_chunk/p50"), Kind::Count),
                page.metric(&at(p, "tokens_per_chunk/p99"), Kind::Count),
                page.metric(&at(p, "tokens_per_chunk/max"), Kind::Count),
                page.metric(&at(p, "inter_chunk_gap_ms/p50"), Kind::GapMs),
                page.metric(&at(p, "inter_chunk_gap_ms/p99"), Kind::GapMs),
                format!(
                    "{} ({})",
                    page.metric(&at(p, "buffered/numerator"), Kind::Count),
                    page.metric(&at(p, "buffered/value"), Kind::Rate)
                ),
            ]
        })
        .collect();
    let headers = [
        "Provider",
        "Complete answers",
        "Chunks per answer p50",
        "Tokens per chunk p50",
        "p99",
        "max",
        "Chunk gap p50",
        "p99",
        "Buffered",
    ];
    let note =
        "Buffered: an answer of two or more tokens that arrived at once, in a single chunk or with its first and \
                last chunks less than 1 ms apart, a span no generation achieves. Its speed would measure the network, \
                not the model: under inferbench's rules it is no tokens-per-second sample, and it is counted here.";
    format!("<h3>How answers streamed</h3>{}<p class=\"note\">{}</p>", table("", &headers, &rows), text(note))
}

/// The p99 tail view's figures: the E2E percentiles from the tail down, and the failures that
/// are no latency sample.
const TAIL_FIGURES: [Column; 5] =
    [E2E_LATENCY.at(99), E2E_LATENCY.at(95), E2E_LATENCY.at(50), TIMEOUT.value(), FAILURE.value()];

pub fn e2e_tail(page: &Page) -> String {
    let rows: Vec<Vec<String>> = ordered(page, TAIL_FIGURES[0])
        .iter()
        .map(|p| {
            let mut cells = vec![name(p)];
            cells.extend(figures(page, p, &TAIL_FIGURES));
            cells.push(samples(page, p, E2E_LATENCY));
            cells
        })
        .collect();
    let mut headers = vec!["Provider".to_string()];
    headers.extend(headings(&TAIL_FIGURES));
    headers.push("Samples".to_string());
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    view(
        "e2e-tail",
        "Lowest latency: the p99 tail",
        "Ordered by end-to-end p99, lower is better: one request in a hundred took at least this long from send to the \
         last answer token. Failed requests are not latency samples; their share is in the failure columns.",
        &table("", &headers, &rows),
    )
}

/// The first-token view's figures: TTFA, the first output of any kind, and the reasoning
/// that came before the answer.
const FIRST_TOKEN_FIGURES: [Column; 6] = [
    TTFA.at(50),
    TTFA.at(95),
    TTFA.at(99),
    TTFO.at(50),
    REASONING_EMISSION.value(),
    PRE_ANSWER_REASONING_TOKENS.at(50),
];

pub fn ttfa(page: &Page) -> String {
    let rows: Vec<Vec<String>> = ordered(page, TTFA.at(95))
        .iter()
        .map(|p| {
            let mut cells = vec![name(p)];
            cells.extend(figures(page, p, &FIRST_TOKEN_FIGURES));
            cells.push(samples(page, p, TTFA));
            cells
        })
        .collect();
    let mut headers = vec!["Provider".to_string()];
    headers.extend(headings(&FIRST_TOKEN_FIGURES));
    headers.push("Samples".to_string());
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    view(
        "ttfa",
        "Time to first token",
        "Ordered by the p95 time to the first visible answer token (TTFA), lower is better. TTFO is the first output of \
         any kind, reasoning included; the reasoning columns show how often, and how much, the model reasoned before \
         answering.",
        &table("", &headers, &rows),
    )
}

/// A failure class's name as the page shows it.
pub fn class_name(class: OperationalOutcome) -> &'static str {
    match class {
        OperationalOutcome::Success => "2xx completed",
        OperationalOutcome::Timeout => "timeout",
        OperationalOutcome::Http429 => "HTTP 429",
        OperationalOutcome::Other4xx => "other HTTP 4xx",
        OperationalOutcome::Http5xx => "HTTP 5xx",
        OperationalOutcome::TransportError => "transport error",
        OperationalOutcome::OtherHttp => "other HTTP (1xx/3xx)",
        OperationalOutcome::InvalidStream => "invalid stream",
        OperationalOutcome::StreamError => "stream error",
        OperationalOutcome::Truncated => "truncated",
    }
}

/// Each failure class with its rate's column in the catalogue, in column order.
fn failure_rates() -> impl Iterator<Item = (OperationalOutcome, Column)> {
    OperationalOutcome::FAILURES.into_iter().filter_map(|class| Some((class, metrics::failure_rate(class)?.value())))
}

pub fn accuracy_failures(page: &Page) -> String {
    let success = format!("{} (correct of submitted)", TASK_SUCCESS.short_label);
    let failure = FAILURE.value().short_heading();
    let mut headers = vec!["Provider", &success, "Wrong answer", "Invalid answer", &failure];
    headers.extend(OperationalOutcome::FAILURES.iter().map(|c| class_name(*c)));
    let rows: Vec<Vec<String>> = page
        .providers
        .iter()
        .map(|p| {
            let m = |key: &str, kind| page.metric(&page.pooled(p, key), kind);
            let mut cells = vec![
                name(p),
                format!(
                    "{}<br><small>{} of {}</small>",
                    page.pooled_figure(p, TASK_SUCCESS.value()),
                    m("correct_count", Kind::Count),
                    m("submitted_count", Kind::Count)
                ),
                m("incorrect_result_count", Kind::Count),
                m("invalid_result_count", Kind::Count),
                format!("{} ({})", page.pooled_figure(p, FAILURE.value()), m("failed_request_count", Kind::Count)),
            ];
            // As report.md: the count, and its rate when there is any.
            for (class, rate) in failure_rates() {
                let count = format!("{}_count", class.label());
                cells.push(match page.value(&page.pooled(p, &count)) {
                    Some(c) if c > 0.0 => {
                        format!("{}<br><small>{}</small>", m(&count, Kind::Count), page.pooled_figure(p, rate))
                    }
                    _ => m(&count, Kind::Count),
                });
            }
            cells
        })
        .collect();
    view(
        "accuracy-failures",
        "Speed, accuracy and failures: how often was the answer right, and how did requests fail?",
        "Task success counts an answer only when it is schema-valid and exactly correct; failed requests stay in the \
         denominator. Each failed request falls in exactly one class (its count, and when there is any its rate over \
         submitted requests): \
         timeout, HTTP 429, other HTTP 4xx, HTTP 5xx, transport error (the connection failed or broke), other HTTP \
         (1xx/3xx), invalid stream (not a valid event stream), stream error (an error inside a 2xx stream), truncated \
         (neither [DONE] nor a finish reason).",
        &table("", &headers, &rows),
    )
}

pub fn failure_log(page: &Page) -> String {
    let responses = &page.inputs.responses;
    let rows: Vec<Vec<String>> = responses
        .failures
        .iter()
        .map(|r| {
            vec![
                r.round_index.to_string(),
                text(page.label_of(&r.provider)),
                text(r.task_family.as_str()),
                format!("<span class=\"o-{}\">{}</span>", attr(r.outcome.label()), text(r.outcome.label())),
                text(&r.error_type.map(|e| e.as_str().to_string()).unwrap_or_default()),
                r.http_status.map_or(String::new(), |s| s.to_string()),
                text(r.retry_after.as_deref().unwrap_or("")),
                // Cut as report.md cuts it.
                wide(&text(&crate::failures::shown_message(r))),
                format!("<code>{}</code>", text(&r.request_id)),
            ]
        })
        .collect();
    let count = crate::failures::count_note(responses, "error_message, error_body");
    let query = if responses.failed_total > responses.failures.len() {
        format!("<p class=\"note\">Every failed request: <code>{}</code></p>", text(crate::responses::FAILURES_QUERY))
    } else {
        String::new()
    };
    view(
        "failure-log",
        "Which requests failed, and why?",
        "Requests with an operational failure, the first in the order they ran: round, provider, family, failure \
         class, what ended it, the HTTP status and Retry-After when there was one, and the start of the error message.",
        &format!(
            "<p class=\"note\">{}</p>{query}{}",
            text(&count),
            table(
                "",
                &["Round", "Provider", "Family", "Class", "Error type", "HTTP", "Retry-After", "Message", "Request"],
                &rows
            )
        ),
    )
}

pub fn provenance(page: &Page) -> String {
    let i = page.inputs;
    let lock = &i.lock;
    let mode = match i.execution.endpoint_mode {
        Some(EndpointMode::Simulated) => "simulated providers (ib-sim on this machine)",
        Some(EndpointMode::Imported) => "imported from the reference runner's records (ib-import)",
        Some(EndpointMode::Providers) => "real providers",
        None => "nothing was fetched",
    };
    let rules = if inferbench_judge::rules::Rules::of(&i.metrics.provenance.inputs).is_reference() {
        "the reference runner's rules (--rules reference)"
    } else {
        "inferbench's rules (the reference's definitions with the documented differences)"
    };
    let period =
        i.execution.wall_clock_period.as_ref().map_or("unknown".to_string(), |p| format!("{} to {}", p.start, p.end));
    let facts: Vec<(&str, String)> = vec![
        ("Run id", format!("<code>{}</code>", text(&lock.run_id))),
        ("Providers", text(mode)),
        ("Fetched", text(&period)),
        ("Fetch segments", i.execution.segments.len().to_string()),
        (
            "Resumed rounds, re-sent attempts",
            format!("{}, {}", i.execution.resumed_rounds, i.execution.resent_attempts),
        ),
        ("Scoring rules", text(rules)),
        ("Percentiles", text(&i.metrics.percentile_convention)),
        ("Report code version", format!("<code>{}</code>", text(inferbench_contract::CODE_VERSION))),
        ("Metrics code version", format!("<code>{}</code>", text(&i.metrics.provenance.code_version))),
        ("Run created by", format!("<code>{}</code>", text(&lock.code_version))),
        ("Dataset release hash", format!("<code>{}</code>", text(&lock.dataset_release_hash))),
        (
            "Selection",
            text(&format!(
                "{}, {} items per task family{}",
                lock.selection.algorithm_version,
                lock.selection.selected_items_per_task_family,
                if lock.selection.sample { " (sample dataset)" } else { "" }
            )),
        ),
        (
            "Tokenizer",
            format!(
                "{} ({}), vocabulary SHA-256 <code>{}</code>",
                text(&lock.tokenizer.encoding),
                text(&lock.tokenizer.implementation),
                text(&lock.tokenizer.vocabulary_sha256)
            ),
        ),
    ];
    let mut dl = String::from("<dl class=\"facts\">");
    for (k, v) in facts {
        dl.push_str(&format!("<dt>{}</dt><dd>{v}</dd>", text(k)));
    }
    dl.push_str("</dl>");
    let hashes = |map: &std::collections::BTreeMap<String, String>| -> Vec<Vec<String>> {
        map.iter()
            .map(|(n, h)| vec![format!("<code>{}</code>", text(n)), format!("<code>{}</code>", text(h))])
            .collect()
    };
    let body = format!(
        "{dl}{}{}",
        table("Files this report was rendered from (SHA-256)", &["File", "SHA-256"], &hashes(&i.hashes)),
        table("Inputs the run is locked to (lock.json, SHA-256)", &["Input", "SHA-256"], &hashes(&lock.inputs)),
    );
    let mut body = body;
    if let Some(parity) = &i.parity {
        // The comparison with the reference's scoring, as report.md words it.
        let items: String = crate::parity::lines(parity, &i.table)
            .iter()
            .map(|l| format!("<li>{}</li>", inline_code(l.trim_start().trim_start_matches("- "))))
            .collect();
        body.push_str(&format!(
            "<h3>Compared with the reference runner's scoring</h3><ul class=\"reasons\">{items}</ul>"
        ));
    }
    view(
        "provenance",
        "Where do these figures come from?",
        "The run, the code that fetched, scored and rendered it, and the SHA-256 of every file it was derived from: \
         re-deriving the same files with the same code gives the same page.",
        &body,
    )
}

/// Markdown text with `code` spans, as HTML.
fn inline_code(line: &str) -> String {
    let mut out = String::new();
    for (k, part) in line.split('`').enumerate() {
        match k % 2 {
            0 => out.push_str(&text(part)),
            _ => out.push_str(&format!("<code>{}</code>", text(part))),
        }
    }
    out
}
