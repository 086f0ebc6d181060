//! Every key a spec may hold: the reference runner's keys (`seed-runner.md` §2.1, same names,
//! so a user can bring their spec) plus inferbench's own (`providers.table`,
//! `inference.stream_limits`, `inference.transport`). Each key is one of:
//!
//! - `Acted`: inferbench reads it and checks its value (in `spec.rs`);
//! - `Is`: informational, but inferbench implements exactly one value, so any other value is
//!   refused rather than silently ignored (the text says what inferbench does);
//! - `Flag`: informational, a boolean either value of which inferbench satisfies;
//! - `Text` / `TextList`: free text (descriptions, prose definitions), never interpreted.
//!
//! A key not listed here is an error, at every level. Sections and keys that only describe
//! what inferbench does anyway are optional; the ones it acts on are required.
use super::check::Const::{Bool, Int, Json, Str, Strs};
use super::check::Rule::{Acted, Flag, Is, Map, Text, TextList};
use super::check::{opt, req, Key, Rule};
use inferbench_contract::vocab::{ReferenceOutcome, TaskFamily};

const ONE_ATTEMPT: &str = "inferbench sends every request exactly once and never retries";
const BARRIER: &str = "inferbench releases every provider of a round together and waits for all of them";
const RECORDED: &str = "inferbench always records this";
const TAXONOMY: &str = "inferbench's evaluation taxonomy is fixed (seed-runner.md §9)";
const DEFINITION: &str = "inferbench computes this metric by its one fixed definition";
/// The task families' names, as the spec spells its keys.
const MEETING_NOTES: &str = TaskFamily::MeetingNotesLookup.as_str();
const TICKET_TRIAGE: &str = TaskFamily::TicketTriage.as_str();
const CONTRACT_TERMS: &str = TaskFamily::ContractTermsExtraction.as_str();
/// The reference's terminal outcomes that release a round: all but its own `runner_error`.
const RELEASING: &[&str] = &[
    ReferenceOutcome::Completed.as_str(),
    ReferenceOutcome::Timeout.as_str(),
    ReferenceOutcome::HttpError.as_str(),
    ReferenceOutcome::TransportError.as_str(),
];
const SMOKE: &str = "inferbench has no smoke mode (its equivalent is a run with --per-family 1); \
                     this section is accepted only as the reference runner writes it";

pub const SPEC: Rule = Map(&[
    opt("runner", Map(RUNNER)),
    req("benchmark", Map(BENCHMARK)),
    req("dataset", Map(DATASET)),
    req("providers", Map(PROVIDERS)),
    req("inference", Map(INFERENCE)),
    opt("execution_plan", Map(EXECUTION_PLAN)),
    opt(super::load::LOAD_KEY, Map(LOAD)),
    opt("stream_timing", Map(STREAM_TIMING)),
    opt("rate_limit_policy", Map(RATE_LIMIT_POLICY)),
    opt("evaluation", Map(EVALUATION)),
    opt("metrics", Map(METRICS)),
    opt("persistence", Map(PERSISTENCE)),
    opt("smoke_run", Map(SMOKE_RUN)),
    req("reporting", Map(REPORTING)),
    opt("operations", Map(OPERATIONS)),
]);

// Where runs go is the stages' --run (the Makefile's RUN); the reference's own CLI commands
// are descriptions here.
const RUNNER: &[Key] =
    &[opt("local_run_root", Text), opt("commands", Map(&[opt("smoke", Text), opt("run", Text), opt("watch", Text)]))];

const BENCHMARK: &[Key] = &[
    req("slug", Acted),
    req("name", Acted),
    opt("status", Is(Str("draft"), "the reference runner accepts only draft specs")),
    opt("objectives", TextList),
    opt("non_goals", TextList),
];

const DATASET: &[Key] = &[
    req("source", Acted),
    opt("manifest", Acted),
    opt("available_items", Acted),
    opt("selected_items", Acted),
    opt("reuse_across_providers", Is(Bool(true), "every provider is sent the same items")),
    req("selection", Map(SELECTION)),
    opt("tokenizer", Map(TOKENIZER)),
    req("task_families", Map(TASK_FAMILIES)),
];

const SELECTION: &[Key] = &[
    opt(
        "method",
        Is(Str("deterministic_per_task_family_prefix"), "inferbench selects a prefix of each family's seeded shuffle"),
    ),
    req("selected_items_per_task_family", Acted),
    opt(
        "seed_inputs",
        Is(
            Strs(&["benchmark.slug", "dataset release hash", "task family", "schedule algorithm version"]),
            "the selection seed is derived from exactly these",
        ),
    ),
    opt("persist_selected_ids_before_execution", Is(Bool(true), "selection.parquet is written before any request")),
];

const TOKENIZER: &[Key] = &[
    opt("implementation", Is(Str("tiktoken"), "inferbench counts tokens with tiktoken's vocabulary (tiktoken-rs)")),
    opt("encoding", Is(Str("o200k_base"), "inferbench counts tokens with o200k_base")),
    opt("same_tokenizer_for_every_provider", Is(Bool(true), "one tokenizer measures every provider")),
    opt("lock_implementation_version_and_vocabulary_hash", Is(Bool(true), "lock.json records both")),
];

const TASK_FAMILIES: &[Key] =
    &[req(MEETING_NOTES, Map(MEETING)), req(TICKET_TRIAGE, Map(TICKET)), req(CONTRACT_TERMS, Map(CONTRACT))];

const SCHEMA: &str = "inferbench scores each family with its fixed rubric and output schema";
const MEETING: &[Key] = &[
    req("available_items", Acted),
    opt("selected_items", Acted),
    req("input_tokens", Acted),
    opt("output_schema", Is(Json(r#"{"answer": "string"}"#), SCHEMA)),
    req("prompt_template", Acted),
];
const TICKET: &[Key] = &[
    req("available_items", Acted),
    opt("selected_items", Acted),
    req("input_tokens", Acted),
    opt("output_schema", Is(Json(r#"{"category": "string", "priority": "string"}"#), SCHEMA)),
    req("prompt_template", Acted),
];
const CONTRACT: &[Key] = &[
    req("available_items", Acted),
    opt("selected_items", Acted),
    req("input_tokens", Acted),
    opt(
        "output_schema",
        Is(
            Json(
                r#"{"agreement_type": "string", "effective_date": "string", "initial_term_end_date": "string",
                "auto_renews": "boolean", "renewal_term_months": "number | null",
                "non_renewal_notice_days": "number | null", "payment_terms_days": "number | null",
                "termination_for_convenience": "boolean", "termination_notice_days": "number | null",
                "security_incident_notice_hours": "number | null"}"#,
            ),
            SCHEMA,
        ),
    ),
    req("prompt_template", Acted),
];

// `table` (inferbench's) or `vendors` (the reference's inline list, completed by built-in
// knowledge: spec/vendors.rs): the reader decides which one the spec uses.
const PROVIDERS: &[Key] = &[
    req("model", Acted),
    opt("protocol", Is(Str("openai-chat-completions"), "inferbench speaks OpenAI-compatible chat completions only")),
    opt("endpoint_class", Text),
    opt("table", Acted),
    opt("vendors", Acted),
];

const INFERENCE: &[Key] = &[
    opt("api", Acted),
    req("reasoning", Map(REASONING)),
    opt("streaming", Is(Bool(true), "inferbench measures streamed responses only")),
    opt("stream_protocol", Is(Str("server_sent_events"), "inferbench reads server-sent events only")),
    req("temperature", Acted),
    req("top_p", Acted),
    opt(
        "top_k",
        Is(Str("disabled"), "inferbench sends no top_k; a provider that needs one to disable it sets it in `extra`"),
    ),
    req("presence_penalty", Acted),
    req("frequency_penalty", Acted),
    req("max_completion_tokens", Acted),
    req("timeout_seconds", Acted),
    opt("max_attempts", Is(Int(1), ONE_ATTEMPT)),
    opt("turns", Is(Int(1), "inferbench sends single-turn conversations (one system and one user message)")),
    req("structured_output", Map(STRUCTURED_OUTPUT)),
    opt("stream_limits", Map(&[opt("max_event_bytes", Acted), opt("max_response_bytes", Acted)])),
    opt("transport", Map(&[opt("http_version", Acted)])),
    // inferbench's own (spec/cache.rs): a nonce per round, and the prompt-cache probe.
    opt("cache_busting", Acted),
    opt("cache_probe", Map(&[opt("rounds", Acted)])),
];

const REASONING: &[Key] = &[
    req("default_effort", Acted),
    opt(
        "provider_overrides",
        Is(Json("{}"), "every provider is sent the default effort through its provider-table `reasoning` fields"),
    ),
    opt("comparability_note", Text),
];

const STRUCTURED_OUTPUT: &[Key] = &[
    req("mode", Acted),
    opt("schema_enforcement", Is(Str("local_strict"), "answers are checked locally, strictly")),
    opt("evaluate_reconstructed_final_answer", Is(Bool(true), "the answer is rebuilt from the stream and scored")),
];

// A load workflow's plan (spec/load.rs), inferbench's own section.
const LOAD: &[Key] = &[
    opt("description", Text),
    req("mode", Acted),
    opt("arrivals", Acted),
    opt("burstiness", Acted),
    opt("trace", Acted),
    opt("rates", Acted),
    opt("speedups", Acted),
    opt(
        "search",
        Map(&[opt("min_rate", Acted), opt("max_rate", Acted), opt("tolerance", Acted), opt("max_probes", Acted)]),
    ),
    opt("concurrency_cap", Acted),
    opt("concurrencies", Acted),
    opt("requests_per_user", Acted),
    opt("step_seconds", Acted),
    opt("warmup_seconds", Acted),
    opt("cooldown_seconds", Acted),
    opt("seed", Acted),
    opt(
        "workload",
        Map(&[
            opt("description", Text),
            req("kind", Acted),
            // Each an integer or a distribution's mapping, checked by spec/workload.rs.
            opt("input_tokens", Acted),
            opt("output_tokens", Acted),
            opt("shared_prefix_tokens", Acted),
            opt("ignore_eos", Acted),
        ]),
    ),
    opt(
        "objectives",
        Map(&[
            opt("ttft_ms", Acted),
            opt("ttfa_ms", Acted),
            opt("tpot_ms", Acted),
            opt("itl_ms", Acted),
            opt("e2e_ms", Acted),
            opt("correct", Acted),
            opt("goodput_target", Acted),
        ]),
    ),
];

const EXECUTION_PLAN: &[Key] = &[
    opt("requests_per_provider", Acted),
    opt("total_provider_requests", Acted),
    opt("question_rounds", Acted),
    opt("per_provider_concurrency", Is(Int(1), "inferbench sends one request at a time per provider")),
    opt("maximum_global_concurrency", Acted),
    opt("simultaneous_provider_calls_per_question", Is(Bool(true), BARRIER)),
    opt("wait_for_all_providers_before_next_question", Is(Bool(true), BARRIER)),
    opt("identical_schedule_across_providers", Is(Bool(true), "every provider gets the same rounds")),
    opt("failed_items_are_not_replaced", Is(Bool(true), ONE_ATTEMPT)),
    opt("terminal_outcomes_release_question_barrier", Is(Strs(RELEASING), "every terminal outcome releases a round")),
    opt(
        "task_family_schedule",
        Map(&[
            opt("method", Is(Str("deterministic_round_robin"), "families take turns, round by round")),
            opt("order", Is(Strs(super::FAMILIES), "inferbench schedules the families in this order")),
        ]),
    ),
    opt(
        "provider_launch_order",
        Map(&[
            opt("method", Is(Str("deterministic_rotation_per_question"), "the launch order rotates by one per round")),
            opt("shared_release_barrier", Is(Bool(true), BARRIER)),
            opt("record_actual_monotonic_start_time", Is(Bool(true), RECORDED)),
            opt("record_launch_skew", Is(Bool(true), RECORDED)),
        ]),
    ),
    opt(
        "connection_policy",
        Map(&[
            opt(
                "persistent_connection_pool_per_provider",
                Is(Bool(true), "each provider has its own kept-alive client"),
            ),
            opt("hidden_warmup_requests", Is(Bool(false), "inferbench sends no request it does not log")),
        ]),
    ),
    opt(
        "client_environment",
        Map(&[
            opt("record_execution_region", Is(Bool(true), RECORDED)),
            opt("record_host_and_runtime_metadata", Is(Bool(true), RECORDED)),
            opt("redact_secrets", Is(Bool(true), "credentials never reach a file")),
        ]),
    ),
    opt(
        "metric_granularity",
        Map(&[
            opt("primary", Is(Strs(&["provider", "task_family"]), "metrics are computed per provider and family")),
            opt("combined_provider_summary", Is(Str("pooled_balanced_requests"), "pooled rows are balanced")),
        ]),
    ),
];

const STREAM_TIMING: &[Key] = &[
    opt("clock", Is(Str("monotonic"), "every offset is on a monotonic clock")),
    opt("unit", Is(Str("milliseconds"), "every offset is in milliseconds")),
    opt("request_start", Text),
    opt(
        "first_model_output",
        Map(&[opt("event", Text), opt("metric", Is(Str("ttfo"), DEFINITION)), opt("population", Text)]),
    ),
    opt(
        "first_answer_token",
        Map(&[
            opt("field", Is(Str("choices[0].delta.content"), "the visible answer is read from this field")),
            opt("event", Text),
            opt("metric", Is(Str("ttfa"), DEFINITION)),
        ]),
    ),
    opt("last_answer_token", Map(&[opt("event", Text)])),
    opt(
        "end_to_end",
        Map(&[
            opt("start", Is(Str("request_start"), DEFINITION)),
            opt("end", Is(Str("last_answer_token"), DEFINITION)),
            opt("metric", Is(Str("e2e_latency"), DEFINITION)),
        ]),
    ),
    opt(
        "reasoning_diagnostics",
        Map(&[
            opt("reasoning_emission_rate", Text),
            opt("reasoning_token_metric", Is(Str("pre_answer_reasoning_tokens"), DEFINITION)),
            opt(
                "no_visible_reasoning",
                Map(&[
                    opt("ttfo_equals_ttfa", Is(Bool(true), DEFINITION)),
                    opt("pre_answer_reasoning_tokens", Is(Int(0), DEFINITION)),
                ]),
            ),
        ]),
    ),
    opt("ignored_for_first_token_timing", TextList),
    opt(
        "raw_stream_capture",
        Map(&[
            opt("persist_every_parsed_event", Is(Bool(true), RECORDED)),
            opt("persist_monotonic_offset", Is(Bool(true), RECORDED)),
            opt("persist_redacted_event_payload", Is(Bool(true), RECORDED)),
            opt("persist_reconstructed_reasoning", Is(Bool(true), RECORDED)),
            opt("persist_reconstructed_answer", Is(Bool(true), RECORDED)),
        ]),
    ),
];

const RATE_LIMIT_POLICY: &[Key] = &[
    opt("http_429", Is(Str("failed_request"), "a 429 is a failed request, never retried")),
    opt("request_retry", Is(Bool(false), ONE_ATTEMPT)),
    opt("quota_normalization", Is(Str("none"), "results are not normalised for quotas")),
    opt("capture_retry_after", Is(Bool(true), RECORDED)),
    opt("capture_rate_limit_headers", Is(Bool(true), RECORDED)),
    opt("interpretation", Text),
];

const EVALUATION: &[Key] = &[
    opt(MEETING_NOTES, Text),
    opt(TICKET_TRIAGE, Text),
    opt(CONTRACT_TERMS, Text),
    opt(
        "normalization_rules",
        Map(&[opt(MEETING_NOTES, TextList), opt(TICKET_TRIAGE, TextList), opt(CONTRACT_TERMS, TextList)]),
    ),
    opt(
        "error_and_timeout_policy",
        Map(&[
            opt("retries", Is(Str("none"), ONE_ATTEMPT)),
            opt("timeout", Is(Str("failed_request"), TAXONOMY)),
            opt("rate_limited_http_429", Is(Str("failed_request"), TAXONOMY)),
            opt("other_http_4xx", Is(Str("failed_request"), TAXONOMY)),
            opt("http_5xx", Is(Str("failed_request"), TAXONOMY)),
            opt("transport_error", Is(Str("failed_request"), TAXONOMY)),
            opt("malformed_json", Is(Str("invalid_result"), TAXONOMY)),
            opt("schema_invalid", Is(Str("invalid_result"), TAXONOMY)),
            opt("missing_required_field", Is(Str("invalid_result"), TAXONOMY)),
            opt("runner_or_evaluator_error", Is(Str("invalidate_run"), TAXONOMY)),
        ]),
    ),
];

const PERCENTILES: Rule = Is(Strs(&["p50", "p95", "p99"]), "inferbench reports p50, p95 and p99");
const LATENCY_METRIC: &[Key] = &[opt("meaning", Text), opt("percentiles", PERCENTILES), opt("population", Text)];

const METRICS: &[Key] = &[
    opt(
        "primary",
        Map(&[
            opt("ttfo", Map(LATENCY_METRIC)),
            opt("ttfa", Map(LATENCY_METRIC)),
            opt("pre_answer_reasoning_tokens", Map(LATENCY_METRIC)),
            opt(
                "reasoning_emission_rate",
                Map(&[opt(
                    "formula",
                    Is(Str("responses_with_pre_answer_reasoning / responses_with_ttfa"), DEFINITION),
                )]),
            ),
            opt("e2e_latency", Map(LATENCY_METRIC)),
            opt(
                "output_tokens_per_second",
                Map(&[
                    opt("meaning", Text),
                    opt("percentiles", PERCENTILES),
                    opt("higher_is_better", Is(Bool(true), DEFINITION)),
                    opt("population", Text),
                    opt(
                        "formula",
                        Is(
                            Str(
                                "(visible_answer_token_count - 1) / (last_answer_token_time - first_answer_token_time)",
                            ),
                            DEFINITION,
                        ),
                    ),
                ]),
            ),
            opt(
                "task_success_rate",
                Map(&[opt("formula", Is(Str("correct_results / submitted_requests"), DEFINITION))]),
            ),
            opt("failure_rate", Map(&[opt("formula", Is(Str("failed_requests / submitted_requests"), DEFINITION))])),
        ]),
    ),
    opt(
        "failure_breakdown",
        Is(
            Strs(&["timeout_rate", "http_429_rate", "other_http_4xx_rate", "http_5xx_rate", "transport_error_rate"]),
            DEFINITION,
        ),
    ),
    opt(
        "ranking",
        Map(&[opt("order_by", Is(Str("pooled_e2e_latency_p99 ascending"), "providers are ranked by this"))]),
    ),
    opt(
        "reporting_statistics",
        Map(&[
            opt("report_sample_count", Is(Bool(true), "every figure is reported with its sample count")),
            opt("percentile_method", Is(Str("nearest_rank"), "percentiles are nearest-rank (integer ranks)")),
        ]),
    ),
];

const PERSISTENCE: &[Key] = &[opt(
    "local",
    Map(&[
        opt("source_of_truth", Is(Bool(true), "the run directory is the only record")),
        opt("raw_requests_and_stream_events", Is(Bool(true), RECORDED)),
        opt("derived_metrics_recomputable", Is(Bool(true), "every derived file is re-derived from the event log")),
    ]),
)];

const SMOKE_RUN: &[Key] = &[
    opt("maximum_attempts", Is(Int(2), SMOKE)),
    opt("cases_per_task_family", Is(Int(1), SMOKE)),
    opt("requests_per_provider_per_attempt", Is(Int(3), SMOKE)),
    opt("maximum_provider_requests_per_attempt", Is(Int(30), SMOKE)),
    opt("per_provider_concurrency", Is(Int(1), SMOKE)),
    opt("environment", Is(Str("local"), SMOKE)),
    opt("budget", Is(Json(r#"{"maximum_requests_per_attempt": 30, "maximum_cost_usd_across_attempts": 5}"#), SMOKE)),
    opt(
        "acceptance_criteria",
        Map(&[
            opt("runner_errors", Is(Int(0), SMOKE)),
            opt("local_artifact_errors", Is(Int(0), SMOKE)),
            opt("every_provider_completes_at_least_one_request_per_task_family", Is(Bool(true), SMOKE)),
            opt("every_provider_returns_http_2xx_per_task_family", Is(Bool(true), SMOKE)),
            opt("every_provider_returns_nonempty_answer_content_per_task_family", Is(Bool(true), SMOKE)),
            opt("every_provider_returns_schema_valid_result_per_task_family", Is(Bool(true), SMOKE)),
            opt("every_observed_reasoning_stream_is_timed_separately_from_answer_content", Is(Bool(true), SMOKE)),
            opt("raw_result_count_matches_submitted_request_count", Is(Bool(true), SMOKE)),
            opt("stream_events_reconstruct_final_answers", Is(Bool(true), SMOKE)),
            opt("evaluations_recompute_from_raw_results", Is(Bool(true), SMOKE)),
            opt("timing_metrics_recompute_from_raw_stream_events", Is(Bool(true), SMOKE)),
            opt("database_writes", Is(Int(0), SMOKE)),
        ]),
    ),
];

const REPORTING: &[Key] = &[
    opt("separate_table_per_task_family", Is(Bool(true), "the report has one table per family")),
    opt("combined_provider_summary", Is(Bool(true), "the report has a pooled summary")),
    opt("combined_summary_weighting", Is(Str("pooled_balanced_requests"), "pooled rows are balanced")),
    opt("rate_display", Is(Str("percentage"), "the report shows rates as percentages")),
    req("required_provider_metric_columns", Acted),
    opt("required_artifacts", TextList),
];

const OPERATIONS: &[Key] = &[
    opt("resumable", Is(Bool(true), "a killed fetch resumes")),
    opt("redact_secrets", Is(Bool(true), "credentials never reach a file")),
    opt("database_writes_during_smoke", Is(Bool(false), "inferbench writes no database")),
    // The reference requires `true` and then an --approve-full flag and an approval id.
    // inferbench has no approval gate: requests reach real providers only when a person runs
    // `make run` (or ib-fetch without --endpoint-base), and that command is the approval;
    // nothing else would behave differently for `false`, so either value is informational.
    opt(
        "full_run_requires_human_approval",
        Flag("informational: a full run starts when a person runs `make run`, which is the approval"),
    ),
];
