//! Prompt caches against `ib-sim`, whose `cached` provider answers a prompt it has received
//! before after a tenth of its TTFT and whose `plain` provider keeps no cache.
//!
//! With `inference.cache_busting`, every round's prompts begin with the round's nonce: the
//! same bytes for every provider of the round (the log's bodies and `round_released` say so),
//! other bytes in another run, so the second run of the same spec and items against the same
//! simulator is never served from the cache the first one warmed. With
//! `inference.cache_probe`, the caching provider's repeats are faster (`faster_repeat`) and the
//! other's are not; the probe's requests count in no other figure; the report says both; and
//! `ib-verify` re-derives the run byte for byte.
use crate::support::{bin, ok, timed_section, Sim, Workspace};
use inferbench_contract::tables::{EventRow, ScheduleRow};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const TABLE: &str = "providers:
  - name: cached
    endpoint: https://cached.invalid/v1/chat/completions
    auth: {kind: bearer, env: IB_TEST_CACHED_KEY}
    model_id: m-cached
    token_limit_field: max_tokens
    reasoning: {reasoning_effort: low}
    price_usd_per_million_tokens: {input: 0.15, output: 0.50}
  - name: plain
    endpoint: https://plain.invalid/v1/chat/completions
    auth: {kind: bearer, env: IB_TEST_PLAIN_KEY}
    model_id: m-plain
    token_limit_field: max_tokens
    reasoning: {reasoning_effort: low}
    price_usd_per_million_tokens: {input: 0.15, output: 0.50}
";

const KEYS: [(&str, &str); 2] = [("IB_TEST_CACHED_KEY", "sk-cached-1"), ("IB_TEST_PLAIN_KEY", "sk-plain-2")];

/// The bundled spec with a nonce per round and a probe of every round: 18 pairs, so that the
/// provider without a cache is told from the one with by far more than the timing noise.
fn with_cache_keys(spec: String) -> String {
    let edited =
        spec.replace("  streaming: true\n", "  streaming: true\n  cache_busting: true\n  cache_probe: {rounds: 18}\n");
    assert_ne!(edited, spec, "the bundled spec's inference section changed; update the edit here");
    edited
}

/// Selects the sample's 18 items (six per family), schedules them and fetches them from `sim`.
fn fetch(ws: &Workspace, sim: &Sim, run: &Path) {
    ok(ws.stage("ib-select", run).args(["--per-family", "6", "--sample"]));
    ok(&mut ws.stage("ib-schedule", run));
    ok(ws.stage("ib-fetch", run).args(["--endpoint-base", &sim.url, "--env-file", "/nonexistent"]).envs(KEYS));
}

/// The system prompt each request of the log was sent, by (round index, provider), and each
/// released round's nonce.
struct Sent {
    system: BTreeMap<(i64, String), String>,
    nonces: BTreeMap<i64, Option<String>>,
}

fn sent(run: &Path) -> Sent {
    let rows = inferbench_store::parquet_io::read::<EventRow>(&run.join("events.parquet")).unwrap().rows;
    let mut out = Sent { system: BTreeMap::new(), nonces: BTreeMap::new() };
    for row in rows {
        let data: Value = match &row.data {
            Some(text) => serde_json::from_str(text).unwrap(),
            None => continue,
        };
        match row.kind.as_str() {
            "request_started" => {
                let messages = data["body"]["messages"].as_array().unwrap();
                assert_eq!(messages[0]["role"], "system");
                let system = messages[0]["content"].as_str().unwrap().to_string();
                let key = (row.round_index.unwrap(), row.provider.unwrap());
                out.system.insert(key, system);
            }
            "round_released" => {
                out.nonces.insert(data["round_index"].as_i64().unwrap(), data["nonce"].as_str().map(str::to_string));
            }
            _ => {}
        }
    }
    out
}

fn schedule(run: &Path) -> Vec<ScheduleRow> {
    inferbench_store::parquet_io::read::<ScheduleRow>(&run.join("schedule.parquet")).unwrap().rows
}

#[test]
fn nonces_keep_runs_apart_and_the_probe_finds_the_provider_that_caches() {
    let ws = Workspace::with_table(TABLE, "cache-sim-profiles.yaml", with_cache_keys);
    let sim = Sim::start(&ws);
    let (first, second) = (ws.run("run-first"), ws.run("run-second"));
    {
        // Only the fetches are timed: the derived stages and the check read their logs.
        let _one_at_a_time = timed_section();
        fetch(&ws, &sim, &first);
        fetch(&ws, &sim, &second);
    }

    // 18 rounds of the run, then 18 probe pairs: every round has one nonce, logged as its
    // round_released says and sent first in every provider's system prompt alike.
    let (a, b) = (sent(&first), sent(&second));
    assert_eq!(a.nonces.len(), 18 + 36, "{:?}", a.nonces);
    for sent in [&a, &b] {
        for (round, nonce) in &sent.nonces {
            let nonce = nonce.as_deref().unwrap_or_else(|| panic!("round {round} has no nonce"));
            assert!(nonce.len() == 16 && nonce.bytes().all(|c| c.is_ascii_hexdigit()), "{nonce}");
            let prompts: Vec<&String> = sent.system.iter().filter(|((r, _), _)| r == round).map(|(_, s)| s).collect();
            assert_eq!(prompts.len(), 2, "both providers sent round {round}");
            assert_eq!(prompts[0], prompts[1], "every provider of round {round} gets the same bytes");
            assert!(prompts[0].starts_with(&format!("[nonce {nonce}]\n")), "{}", prompts[0]);
        }
    }
    let scheduled = schedule(&first);
    for row in &scheduled {
        assert_eq!(row.nonce, a.nonces[&row.round_index], "the schedule's nonce is the one sent");
    }
    // The second run sends the same items, round for round, with other nonces: other bytes.
    let items = |run: &Path| schedule(run).into_iter().map(|r| (r.round_index, r.item_id)).collect::<Vec<_>>();
    assert_eq!(items(&first), items(&second));
    for round in 0..18 {
        assert_ne!(a.nonces[&round], b.nonces[&round]);
        assert_ne!(a.system[&(round, "cached".into())], b.system[&(round, "cached".into())]);
    }
    // So the caching provider served none of the second run's rounds from the cache the first
    // warmed: its only hits are the probes' repeats, 18 in each run.
    let log = std::fs::read_to_string(&sim.log).unwrap();
    let lines: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let cached: Vec<&Value> = lines.iter().filter(|v| v["provider"] == "cached").collect();
    assert_eq!(cached.len(), 2 * 54);
    let hits = cached.iter().filter(|v| v["prompt_cache_hit"] == true).count();
    assert_eq!(hits, 36, "only the repeats");
    assert!(lines.iter().filter(|v| v["provider"] == "plain").all(|v| v.get("prompt_cache_hit").is_none()));
    drop(sim);

    ws.derive(&first);
    let metrics: Value = serde_json::from_slice(&std::fs::read(first.join("metrics.json")).unwrap()).unwrap();
    let probe = &metrics["cache_probe"];
    assert_eq!(probe["rounds"], 18, "{probe:#}");
    let provider = |name: &str| probe["providers"].as_array().unwrap().iter().find(|p| p["provider"] == name).unwrap();
    let (cached, plain) = (provider("cached"), provider("plain"));
    assert_eq!((cached["paired_count"].as_i64(), cached["unpaired_count"].as_i64()), (Some(18), Some(0)));
    assert_eq!(cached["verdict"], "faster_repeat", "{cached:#}");
    assert!(cached["ttfa_difference_ms"]["interval"]["lower"].as_f64().unwrap() > 0.0);
    assert!(cached["repeat_ttfa_p50_ms"].as_f64().unwrap() < cached["first_ttfa_p50_ms"].as_f64().unwrap());
    assert_eq!(plain["paired_count"], 18);
    assert_ne!(plain["verdict"], "faster_repeat", "{plain:#}");
    // The probe's 72 requests count in no other figure: each provider submitted the run's 18.
    for row in metrics["combined_provider_metrics"].as_array().unwrap() {
        assert_eq!((row["scheduled_count"].as_i64(), row["submitted_count"].as_i64()), (Some(18), Some(18)), "{row:#}");
    }

    let report = std::fs::read_to_string(first.join("report.md")).unwrap();
    assert!(report.contains("## Prompt cache probe"), "{report}");
    assert!(report.contains("| cached | 18 |"), "{report}");
    assert!(report.contains("faster repeat"), "{report}");
    assert!(report.contains("Cache busting is on"), "{report}");
    assert!(report.contains("0 failed request(s) of 36 responses"), "the probe's are not the run's: {report}");
    let manifest: Value = serde_json::from_slice(&std::fs::read(first.join("manifest.json")).unwrap()).unwrap();
    assert_eq!((manifest["scheduled_requests"].as_u64(), manifest["responses"].as_u64()), (Some(108), Some(108)));
    assert_eq!(manifest["status"], "complete", "{manifest:#}");
    let html = std::fs::read_to_string(first.join("report.html")).unwrap();
    assert!(html.contains("Prompt cache probe") && html.contains("Cache busting is on"));

    // The run re-derives byte for byte, nonces and probe included.
    let out = Command::new(bin("ib-verify"))
        .arg(&first)
        .arg("--spec")
        .arg(ws.spec())
        .arg("--dataset")
        .arg(ws.dataset())
        .current_dir(ws.dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("re-derived byte for byte"), "{said}");
}
