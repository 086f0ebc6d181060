//! Writes synthetic scored runs for measuring `ib-compare` at scale: the files it reads
//! (lock.json, manifest.json, responses.parquet, and pooled.parquet or, for every other run,
//! the legacy pooled rows of metrics.parquet), nothing else. Not a benchmark of providers:
//! latencies are drawn per provider around a fixed level, with a share of failed requests.
//!
//! cargo run --release -p inferbench-compare --example synth_runs -- OUT RUNS REQUESTS [PROVIDERS]
use inferbench_contract::metrics::{E2E_LATENCY, FAILURE, OUTPUT_TOKENS_PER_SECOND, TASK_SUCCESS, TTFA};
use polars::prelude::*;
use std::path::Path;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn write(path: &Path, df: &mut DataFrame) {
    let file = std::fs::File::create(path).unwrap();
    ParquetWriter::new(file).finish(df).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, out, runs, requests, rest @ ..] = args.as_slice() else {
        panic!("usage: synth_runs OUT RUNS REQUESTS [PROVIDERS]");
    };
    let (runs, requests): (usize, usize) = (runs.parse().unwrap(), requests.parse().unwrap());
    let providers: usize = rest.first().map_or(10, |p| p.parse().unwrap());
    let rounds = requests / providers;
    let names: Vec<String> = (0..providers).map(|p| format!("provider-{p:02}")).collect();
    let mut rng = Rng(7);
    let start_us: i64 = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z
    for r in 0..runs {
        let dir = Path::new(out).join(format!("workflow=synthetic/run=r{r:05}"));
        std::fs::create_dir_all(&dir).unwrap();
        let run_id = format!("run=r{r:05}");
        std::fs::write(dir.join("lock.json"), format!("{{\"run_id\":\"{run_id}\"}}\n")).unwrap();
        let started = start_us + r as i64 * 86_400_000_000;
        let secs = started / 1_000_000;
        let days = secs / 86_400;
        let (year, month, day) = inferbench_contract::civil::civil_from_days(days);
        let when = format!("{year:04}-{month:02}-{day:02}T00:00:00.000Z");
        std::fs::write(
            dir.join("manifest.json"),
            format!(
                "{{\"v\":1,\"run_id\":\"{run_id}\",\"workflow\":\"synthetic\",\"status\":\"complete\",\"execution\":{{\"wall_clock_period\":\
                 {{\"start\":\"{when}\",\"end\":\"{when}\"}},\"endpoint_mode\":\"simulated\"}}}}\n"
            ),
        )
        .unwrap();
        let n = rounds * providers;
        let (mut provider, mut round, mut e2e, mut ttfa, mut answer) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::new());
        for round_index in 0..rounds {
            for (p, name) in names.iter().enumerate() {
                let failed = rng.unit() < 0.03;
                let level = 400.0 + 35.0 * p as f64 + 20.0 * (r as f64 / 50.0).sin();
                provider.push(name.as_str());
                round.push(round_index as i64);
                let t = 50.0 + 10.0 * p as f64 + 40.0 * rng.unit();
                e2e.push((!failed).then(|| level + 300.0 * rng.unit() * rng.unit()));
                ttfa.push((!failed).then_some(t));
                answer.push(format!("{{\"answer\":\"item {round_index} from {name}: {}\"}}", rng.next()));
            }
        }
        let mut responses = df!(
            "request_id" => (0..n).map(|i| format!("{run_id}-{i:06}")).collect::<Vec<_>>(),
            "provider" => provider,
            "round_index" => round,
            E2E_LATENCY.summary.unwrap() => e2e,
            TTFA.summary.unwrap() => ttfa,
            "answer" => answer,
        )
        .unwrap();
        write(&dir.join("responses.parquet"), &mut responses);
        let mut cols = vec![
            Column::new("provider".into(), names.clone()),
            Column::new("rank".into(), (0..providers).map(|p| Some(p as i64 + 1)).collect::<Vec<_>>()),
            Column::new("eligible".into(), vec![true; providers]),
            Column::new("submitted_count".into(), vec![rounds as i64; providers]),
        ];
        let speeds = [TTFA.at(50), E2E_LATENCY.at(50), E2E_LATENCY.at(99), OUTPUT_TOKENS_PER_SECOND.at(50)];
        for (m, column) in speeds.iter().enumerate() {
            cols.push(Column::new(
                column.key().into(),
                (0..providers).map(|p| 100.0 * (m + 1) as f64 + p as f64 + rng.unit()).collect::<Vec<f64>>(),
            ));
        }
        cols.push(Column::new(
            TASK_SUCCESS.value().key().into(),
            (0..providers).map(|_| 0.9 + 0.1 * rng.unit()).collect::<Vec<f64>>(),
        ));
        let failures = (0..providers).map(|_| 0.03 * rng.unit()).collect::<Vec<f64>>();
        cols.push(Column::new(FAILURE.value().key().into(), failures));
        if r % 2 == 0 {
            write(&dir.join("pooled.parquet"), &mut DataFrame::new_infer_height(cols).unwrap());
        } else {
            cols.insert(1, Column::new("task_family".into(), vec!["pooled"; providers]));
            write(&dir.join("metrics.parquet"), &mut DataFrame::new_infer_height(cols).unwrap());
        }
    }
    println!("{runs} runs of {} responses in {out}", rounds * providers);
}
