//! Helpers for the end-to-end tests: the real binaries, a scratch pipeline, and `ib-sim` on
//! an ephemeral loopback port.
use inferbench_store::stages::{self, Flag};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn bin(name: &str) -> PathBuf {
    let path = match name {
        "ib-select" => env!("CARGO_BIN_EXE_ib-select"),
        "ib-schedule" => env!("CARGO_BIN_EXE_ib-schedule"),
        "ib-fetch" => env!("CARGO_BIN_EXE_ib-fetch"),
        "ib-reconstruct" => env!("CARGO_BIN_EXE_ib-reconstruct"),
        "ib-evaluate" => env!("CARGO_BIN_EXE_ib-evaluate"),
        "ib-aggregate" => env!("CARGO_BIN_EXE_ib-aggregate"),
        "ib-report" => env!("CARGO_BIN_EXE_ib-report"),
        "ib-sim" => env!("CARGO_BIN_EXE_ib-sim"),
        "ib-import" => env!("CARGO_BIN_EXE_ib-import"),
        "ib-verify" => env!("CARGO_BIN_EXE_ib-verify"),
        other => panic!("unknown binary {other}"),
    };
    PathBuf::from(path)
}

/// A scratch copy of the test pipeline: the bundled spec and prompts, the test provider
/// table and simulated profiles, and the sample dataset.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    /// The workspace of `tests/fixtures/e2e/providers.yaml` and `sim-profiles.yaml`.
    pub fn new() -> Workspace {
        Workspace::with_fixtures("providers.yaml", "sim-profiles.yaml")
    }

    /// A workspace with another provider table and profile file of `tests/fixtures/e2e/`.
    pub fn with_fixtures(providers: &str, profiles: &str) -> Workspace {
        let table = std::fs::read_to_string(repo().join("tests/fixtures/e2e").join(providers)).unwrap();
        Workspace::with_table(&table, profiles, |spec| spec)
    }

    /// A workspace with the provider table `table`, the simulated profiles `profiles` of
    /// `tests/fixtures/e2e/`, and the bundled spec as `edit_spec` changes it.
    pub fn with_table(table: &str, profiles: &str, edit_spec: impl Fn(String) -> String) -> Workspace {
        let dir = tempfile::tempdir().expect("temp dir");
        let pipeline = dir.path().join("pipeline");
        std::fs::create_dir_all(pipeline.join("prompts")).unwrap();
        let bundled = repo().join("pipelines/micro-single-task");
        let fixtures = repo().join("tests/fixtures/e2e");
        let count = table.lines().filter(|l| l.trim_start().starts_with("- name:")).count();
        // The bundled spec sized for the test table's providers: its execution plan must
        // agree with the provider table (a round releases every provider at once).
        let spec = std::fs::read_to_string(bundled.join("spec.yaml")).unwrap();
        let sized = spec
            .replace("maximum_global_concurrency: 10\n", &format!("maximum_global_concurrency: {count}\n"))
            .replace("total_provider_requests: 6000\n", &format!("total_provider_requests: {}\n", 600 * count));
        assert_ne!(sized, spec, "the bundled spec's execution plan changed; update the sizing here");
        std::fs::write(pipeline.join("spec.yaml"), edit_spec(sized)).unwrap();
        for entry in std::fs::read_dir(bundled.join("prompts")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, pipeline.join("prompts").join(path.file_name().unwrap())).unwrap();
        }
        std::fs::write(pipeline.join("providers.yaml"), table).unwrap();
        std::fs::copy(fixtures.join(profiles), pipeline.join("sim-profiles.yaml")).unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        for entry in std::fs::read_dir(repo().join("tests/fixtures/micro-single-task")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, data.join(path.file_name().unwrap())).unwrap();
        }
        Workspace { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn spec(&self) -> PathBuf {
        self.path("pipeline/spec.yaml")
    }

    pub fn dataset(&self) -> PathBuf {
        self.path("data")
    }

    pub fn run(&self, name: &str) -> PathBuf {
        self.path(&format!("runs/{name}"))
    }

    /// A stage command with the flags the stage table gives it, this workspace's spec and
    /// dataset (and the default rules, inferbench's).
    pub fn stage(&self, name: &str, run: &Path) -> Command {
        let mut cmd = stage_command(name, run, &self.spec(), &self.dataset(), None);
        cmd.current_dir(self.dir.path());
        cmd
    }

    /// Runs every stage after the fetch on `run`, in pipeline order; each must succeed.
    pub fn derive(&self, run: &Path) {
        for stage in stages::derived() {
            ok(&mut self.stage(stage.binary, run));
        }
    }
}

/// Stage `name`'s command on `run`, with the flags the stage table gives it: `spec`, `dataset`
/// and `rules` (`None`: the stage's default, inferbench's).
pub fn stage_command(name: &str, run: &Path, spec: &Path, dataset: &Path, rules: Option<&str>) -> Command {
    let stage = stages::by_binary(name).unwrap_or_else(|| panic!("{name} is no stage of inferbench_store::stages"));
    let mut cmd = Command::new(bin(name));
    cmd.arg("--run").arg(run);
    for flag in stage.flags {
        match (flag, rules) {
            (Flag::Spec, _) => cmd.arg(flag.name()).arg(spec),
            (Flag::Dataset, _) => cmd.arg(flag.name()).arg(dataset),
            (Flag::Rules, Some(rules)) => cmd.arg(flag.name()).arg(rules),
            (Flag::Rules, None) => continue,
        };
    }
    cmd
}

/// Every stage after the fetch on `run`, as `make rescore` runs them, under `rules`.
pub fn rescore(run: &Path, spec: &Path, dataset: &Path, rules: &str) {
    for stage in stages::derived() {
        ok(&mut stage_command(stage.binary, run, spec, dataset, Some(rules)));
    }
}

/// Runs a command to completion and asserts it succeeded.
pub fn ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{:?} failed with {:?}\nstdout: {}\nstderr: {}",
        cmd,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

static TIMED: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Tests whose assertions hold within tight timing (send lag, launch skew, a chunk's arrival
/// within a millisecond, a latency against its profile) or that load both cores (a real
/// server, a browser) take turns: on a 2-core machine two simulated runs at once would
/// measure the scheduler, not the client. Nothing else runs a timed section beside them.
pub fn timed_section() -> std::sync::RwLockWriteGuard<'static, ()> {
    TIMED.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Tests whose timing assertions hold with a wide margin (a provider ten times faster than
/// another, a deadline seconds away) run their fetches beside each other, never beside a
/// [`timed_section`]. Tests that check no timing at all take neither.
pub fn shared_section() -> std::sync::RwLockReadGuard<'static, ()> {
    TIMED.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running `ib-sim`, stopped on drop.
pub struct Sim {
    child: Child,
    pub url: String,
    pub log: PathBuf,
}

impl Sim {
    pub fn start(ws: &Workspace) -> Sim {
        Sim::start_with(ws, &[])
    }

    /// `ib-sim` with more flags (`--seed 2`).
    pub fn start_with(ws: &Workspace, flags: &[&str]) -> Sim {
        let url_file = ws.path("sim-url");
        let _ = std::fs::remove_file(&url_file);
        let log = ws.path("sim-log.jsonl");
        let child = Command::new(bin("ib-sim"))
            .arg("--profiles")
            .arg(ws.path("pipeline/sim-profiles.yaml"))
            .arg("--spec")
            .arg(ws.spec())
            .arg("--dataset")
            .arg(ws.dataset())
            .arg("--port-file")
            .arg(&url_file)
            .arg("--log")
            .arg(&log)
            .args(flags)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn ib-sim");
        let started = Instant::now();
        while !url_file.exists() {
            assert!(started.elapsed() < Duration::from_secs(20), "ib-sim did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let url = std::fs::read_to_string(&url_file).unwrap().trim().to_string();
        Sim { child, url, log }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `dir`, recursively.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The texts a file holds, in every form a reader could decode: the raw bytes; for Parquet,
/// every string cell and metadata value; and each of those with up to three layers of JSON
/// escapes decoded (`\u0073k-…` inside a JSON string inside a log line is still the key).
pub fn readable_texts(path: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap();
    let mut texts = vec![String::from_utf8_lossy(&bytes).into_owned()];
    if path.extension().is_some_and(|e| e == "parquet") {
        texts.extend(parquet_strings(path));
    }
    let mut all = Vec::new();
    for text in texts {
        let mut layer = text;
        for _ in 0..4 {
            let next = unescape(&layer);
            let done = next == layer;
            all.push(std::mem::replace(&mut layer, next));
            if done {
                break;
            }
        }
    }
    all
}

fn parquet_strings(path: &Path) -> Vec<String> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out: Vec<String> = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .filter_map(|kv| kv.value.clone())
        .collect();
    for batch in builder.build().unwrap() {
        let batch = batch.unwrap();
        for column in batch.columns() {
            column_strings(path, column.as_ref(), &mut out);
        }
    }
    out
}

/// Every string of a column, nested ones (struct fields, list items) included.
fn column_strings(path: &Path, column: &dyn arrow_array::Array, out: &mut Vec<String>) {
    use arrow_array::{LargeListArray, LargeStringArray, ListArray, StringArray, StructArray};
    let any = column.as_any();
    if let Some(strings) = any.downcast_ref::<StringArray>() {
        out.extend(strings.iter().flatten().map(str::to_string));
    } else if let Some(strings) = any.downcast_ref::<LargeStringArray>() {
        out.extend(strings.iter().flatten().map(str::to_string));
    } else if let Some(fields) = any.downcast_ref::<StructArray>() {
        for child in fields.columns() {
            column_strings(path, child.as_ref(), out);
        }
    } else if let Some(list) = any.downcast_ref::<ListArray>() {
        column_strings(path, list.values().as_ref(), out);
    } else if let Some(list) = any.downcast_ref::<LargeListArray>() {
        column_strings(path, list.values().as_ref(), out);
    } else {
        assert!(!column.data_type().is_nested(), "{}: a nested column the scan cannot read", path.display());
    }
}

/// One layer of JSON string escapes decoded (`\\` → `\`, `\"` → `"`, `\uXXXX` → the char).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) if hex.len() == 4 => {
                        chars.nth(4);
                        out.push(decoded);
                    }
                    _ => out.push(c),
                }
            }
            Some(e @ ('\\' | '"' | '/')) => {
                chars.next();
                out.push(e);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Asserts that no file of `run` holds any of `secrets` in any readable form.
pub fn assert_no_secret(run: &Path, secrets: &[&str]) {
    for path in files(run) {
        for text in readable_texts(&path) {
            for secret in secrets {
                assert!(!text.contains(secret), "{} holds a credential value ({}…)", path.display(), &secret[..4]);
            }
        }
    }
}
