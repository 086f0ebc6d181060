//! `report.html` as a reader's browser shows it. `tests/browser/check-report.mjs` opens the page
//! in headless Debian Chromium (playwright-core) from file://, every network request blocked,
//! and checks the page contract of `tests/browser/README.md`: no console error, uncaught
//! exception or request off the machine; `data-report-ready="1"` within 2 s of load; every view
//! with its heading, how-to-read line and table or chart; every chart's series drawn; every
//! `data-metric`/`data-comparison` value equal to the figure it names in `metrics.json` /
//! `comparisons.json`; the pair and scope selectors showing exactly what they select; every view
//! in print; no sideways scroll on a phone. Desktop and phone screenshots of each checked page
//! are copied to `target/browser-screenshots/<test>/`.
//!
//! The checker is proven on `tests/browser/fixture/` (a hand-written page that follows the
//! contract) and on broken copies of it and of the real report, each of which it must reject
//! with the problem named.
//!
//! Needs Chromium (`/usr/bin/chromium`, or `IB_CHROMIUM`: `make test` installs Debian's), Node.js
//! (`node`, or `IB_NODE`) and playwright-core in `tests/browser/node_modules` (`make test` runs
//! `tests/browser/install.sh`). Missing, the tests fail saying so: they never pass unchecked.
use crate::support::{ok, repo, Sim, Workspace};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn node() -> PathBuf {
    std::env::var_os("IB_NODE").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("node"))
}

/// Fails, naming the install command, unless Chromium, Node.js and playwright-core are there.
fn require_browser() {
    let chromium =
        std::env::var_os("IB_CHROMIUM").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        chromium.exists(),
        "{} not found: the browser test needs Debian's Chromium: `apt-get install --no-install-recommends chromium` \
         (`make test` installs it, as root), or set IB_CHROMIUM",
        chromium.display()
    );
    let version = Command::new(node()).arg("--version").output();
    assert!(
        version.as_ref().is_ok_and(|o| o.status.success()),
        "`{} --version` failed ({version:?}): the browser test needs Node.js 20 or later (or set IB_NODE)",
        node().display()
    );
    let module = repo().join("tests/browser/node_modules/playwright-core/package.json");
    assert!(
        module.exists(),
        "{} not found: run `tests/browser/install.sh` (npm ci of the pinned playwright-core; `make test` runs it)",
        module.display()
    );
}

/// One page for the checker: the report, the two files its figures name, where its
/// screenshots go.
struct Page<'a> {
    report: &'a Path,
    metrics: &'a Path,
    comparisons: &'a Path,
    shots: PathBuf,
}

/// Runs the checker on every page in one browser (a Chromium start costs seconds); returns its
/// summary of each page, in order, and all it printed.
fn check(pages: &[Page]) -> (Vec<serde_json::Value>, String) {
    require_browser();
    // Chromium takes both cores for a moment: not while another test measures tight timings,
    // but beside the others (its own page-ready limit is seconds).
    let _beside_others = crate::support::shared_section();
    let mut command = Command::new(node());
    command.arg(repo().join("tests/browser/check-report.mjs"));
    for page in pages {
        command.arg(page.report).arg(page.metrics).arg(page.comparisons).arg(&page.shots);
    }
    let out = command.output().expect("run node tests/browser/check-report.mjs");
    let said = text(&out);
    assert!(matches!(out.status.code(), Some(0 | 1)), "the checker could not run ({:?}):\n{said}", out.status);
    let summaries: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a summary line ({e}): {l}\n{said}")))
        .collect();
    assert_eq!(summaries.len(), pages.len(), "one summary per page:\n{said}");
    let all_passed = summaries.iter().all(|s| s["ok"] == true);
    assert_eq!(out.status.success(), all_passed, "the exit code says whether every page passed:\n{said}");
    (summaries, said)
}

fn text(out: &Output) -> String {
    format!("stdout: {}\nstderr: {}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The checker passes `report`; its screenshots are kept in target/browser-screenshots/`name`.
pub fn assert_passes(name: &str, report: &Path, metrics: &Path, comparisons: &Path, scratch: &Path) {
    let page = Page { report, metrics, comparisons, shots: scratch.join("screenshots") };
    let (summaries, said) = check(std::slice::from_ref(&page));
    assert_passed(name, &page, &summaries[0], &said);
}

/// `summary` says the checker passed `page`; its screenshots are kept.
fn assert_passed(name: &str, page: &Page, summary: &serde_json::Value, said: &str) {
    assert!(summary["ok"] == true, "the browser check of {} failed:\n{said}", page.report.display());
    eprintln!("{name}: {summary}");
    let kept = repo().join("target/browser-screenshots").join(name);
    std::fs::create_dir_all(&kept).unwrap();
    for png in ["desktop.png", "phone.png"] {
        let from = page.shots.join(png);
        assert!(std::fs::metadata(&from).is_ok_and(|m| m.len() > 0), "no screenshot {}", from.display());
        std::fs::copy(&from, kept.join(png)).unwrap();
    }
}

/// A broken copy of a page and what the checker must say about it.
struct Broken {
    what: &'static str,
    html: String,
    expect: Vec<String>,
}

fn insert_after_body_tag(html: &str, snippet: &str) -> String {
    let start = html.find("<body").expect("the page has a <body> tag");
    let end = start + html[start..].find('>').unwrap() + 1;
    format!("{}{snippet}{}", &html[..end], &html[end..])
}

fn insert_before_body_end(html: &str, snippet: &str) -> String {
    let at = html.rfind("</body>").expect("the page has a </body> tag");
    format!("{}{snippet}{}", &html[..at], &html[at..])
}

/// The first `data-value="…"` of an element that carries `data-metric`, changed to another
/// number; returns the page and the new value text.
fn change_first_metric_value(html: &str) -> (String, String) {
    let mut from = 0;
    while let Some(found) = html[from..].find("data-value=\"") {
        let at = from + found;
        let value_start = at + "data-value=\"".len();
        let value_end = value_start + html[value_start..].find('"').unwrap();
        let tag_start = html[..at].rfind('<').unwrap();
        let tag_end = at + html[at..].find('>').unwrap();
        if html[tag_start..tag_end].contains("data-metric=") {
            let old = &html[value_start..value_end];
            let new = if old == "-123456.5" { "-654321.5" } else { "-123456.5" };
            return (format!("{}{new}{}", &html[..value_start], &html[value_end..]), new.to_string());
        }
        from = value_end;
    }
    panic!("the page has no element with both data-metric and data-value=\"…\"");
}

/// Breakages any contract page can be given: a script that throws, an image from the network,
/// a figure that is not the metrics file's, content wider than a phone.
fn generic_breakages(html: &str) -> Vec<Broken> {
    let (changed, value) = change_first_metric_value(html);
    vec![
        Broken {
            what: "a script that throws",
            html: insert_before_body_end(html, "<script>throw new Error(\"injected by the test\")</script>"),
            expect: vec!["uncaught exception in the page: injected by the test".into()],
        },
        Broken {
            what: "an image from the network",
            html: insert_after_body_tag(html, "<img src=\"http://example.com/x.png\" alt=\"\">"),
            expect: vec![
                "a request not to file: (blocked): desktop: GET http://example.com/x.png".into(),
                "request failed: http://example.com/x.png".into(),
            ],
        },
        Broken {
            what: "a data-value that is not the metric's",
            html: changed,
            expect: vec![format!("data-value=\"{value}\", but metrics.json has")],
        },
        Broken {
            what: "content wider than a phone",
            html: insert_after_body_tag(html, "<div style=\"width: 1000px\">wide</div>"),
            expect: vec!["phone: the page scrolls sideways".into()],
        },
    ]
}

/// Each broken copy, written beside `metrics`/`comparisons` (same names), must fail with its
/// problems named; `first` (a page that must pass, named) is checked in the same browser.
fn assert_each_fails(
    first: Option<(&str, Page)>,
    broken: Vec<Broken>,
    metrics: &Path,
    comparisons: &Path,
    scratch: &Path,
) {
    let mut reports = Vec::new();
    for (i, b) in broken.iter().enumerate() {
        let dir = scratch.join(format!("broken-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let report = dir.join("report.html");
        std::fs::write(&report, &b.html).unwrap();
        reports.push((report, dir.join("screenshots")));
    }
    let mut pages: Vec<Page> = first.iter().map(|(_, p)| Page { shots: p.shots.clone(), ..*p }).collect();
    pages.extend(reports.iter().map(|(report, shots)| Page { report, metrics, comparisons, shots: shots.clone() }));
    let (summaries, said) = check(&pages);
    let mut summaries = summaries.into_iter();
    if let Some((name, page)) = &first {
        assert_passed(name, page, &summaries.next().unwrap(), &said);
    }
    for (b, summary) in broken.iter().zip(summaries) {
        assert!(summary["ok"] == false, "the checker passed a page with {}:\n{summary}", b.what);
        let found: Vec<&str> = summary["found"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
        for expected in &b.expect {
            assert!(
                found.iter().any(|p| p.contains(expected.as_str())),
                "with {}, the checker did not say {expected:?}:\n{found:#?}",
                b.what
            );
        }
    }
}

#[test]
fn the_checker_passes_the_contract_fixture() {
    let fixture = repo().join("tests/browser/fixture");
    let scratch = tempfile::tempdir().unwrap();
    assert_passes(
        "fixture",
        &fixture.join("report.html"),
        &fixture.join("metrics.json"),
        &fixture.join("comparisons.json"),
        scratch.path(),
    );
}

#[test]
fn the_checker_rejects_broken_copies_of_the_fixture() {
    let fixture = repo().join("tests/browser/fixture");
    let html = std::fs::read_to_string(fixture.join("report.html")).unwrap();
    let edit = |page: &str, from: &str, to: &str| {
        assert!(page.contains(from), "the fixture no longer has {from:?}");
        page.replacen(from, to, 1)
    };
    // Many breakages in one page (a Chromium start each costs seconds): every one is named.
    let mut many = html.clone();
    let mut named = Vec::new();
    for (from, to, expect) in [
        ("id=\"view-failure-log\"", "id=\"view-renamed\"", "#view-failure-log: missing"),
        (
            "<tr data-pair=\"alpha|gamma\" hidden>",
            "<tr data-pair=\"alpha|gamma\">",
            "#pair-select = \"alpha|beta\": <tr data-pair=\"alpha|gamma\"> has no hidden attribute",
        ),
        (
            "el.hidden = el.getAttribute(attr) !== select.value;",
            "if (el.getAttribute(attr) === select.value) el.hidden = false;",
            "#pair-select = \"beta|gamma\": <div data-pair=\"alpha|beta\"> is visible",
        ),
        (
            "<circle data-series=\"gamma\" cx=\"30\" cy=\"15\" r=\"5\"",
            "<circle data-series=\"gamma\" cx=\"30\" cy=\"15\" r=\"0\"",
            "svg[data-chart=\"speed-vs-start\"]: series \"gamma\": none of its 1 element(s) shows",
        ),
        (
            "data-value-y=\"1197.625\"",
            "data-value-y=\"1197.6250001\"",
            "#view-speed-vs-start: data-metric-y=\"/combined_provider_metrics/0/output_tokens_per_second_p50\" \
             data-value-y=\"1197.6250001\", but metrics.json has 1197.625",
        ),
        (
            "<option value=\"tickets\">tickets</option>",
            "<option value=\"bills\">bills</option>",
            "has no option for the task family \"tickets\"",
        ),
        (
            "<html lang=\"en\" data-report-ready=\"0\">",
            "<html lang=\"en\">",
            "<html lang=\"en\">: does not start with data-report-ready=\"0\"",
        ),
        (
            "/provenance/inputs/odd~0~1key",
            "/provenance/inputs/odd~1key",
            "data-metric=\"/provenance/inputs/odd~1key\" names nothing in metrics.json",
        ),
        (
            "data-comparison=\"/pairwise_e2e_latency_differences/2/difference_p50_ms\" data-value=\"null\">–",
            "data-comparison=\"/pairwise_e2e_latency_differences/2/difference_p50_ms\" data-value=\"0\">–",
            "data-comparison=\"/pairwise_e2e_latency_differences/2/difference_p50_ms\" data-value=\"0\", \
             but comparisons.json has null",
        ),
        (
            "data-series=\"gamma,alpha,beta\" viewBox=\"0 0 400 90\" role=\"img\">\n    <rect data-series=\"gamma\" x=\"60\" y=\"5\" width=\"25\"",
            "data-series=\"gamma,alpha,beta\" viewBox=\"0 0 400 90\" role=\"img\">\n    <rect data-series=\"omega\" x=\"60\" y=\"5\" width=\"25\"",
            "svg[data-chart=\"ttfa\"]: series \"gamma\" has no [data-series=\"gamma\"] element inside it",
        ),
    ] {
        many = edit(&many, from, to);
        named.push(expect.to_string());
    }
    let mut broken = generic_breakages(&html);
    broken.extend([
        Broken {
            what: "a page that never says it is ready",
            html: edit(&html, "root.setAttribute(\"data-report-ready\", \"1\");", ""),
            expect: vec!["html[data-report-ready] is \"0\", not \"1\", 2000 ms after the load event".into()],
        },
        Broken {
            what: "a console error",
            html: insert_before_body_end(&html, "<script>console.error(\"logged by the test\")</script>"),
            expect: vec!["console error: logged by the test".into()],
        },
        Broken { what: "ten breakages of the contract", html: many, expect: named },
    ]);
    let scratch = tempfile::tempdir().unwrap();
    // The fixture's data files under the names the checker reports.
    let metrics = scratch.path().join("metrics.json");
    let comparisons = scratch.path().join("comparisons.json");
    std::fs::copy(fixture.join("metrics.json"), &metrics).unwrap();
    std::fs::copy(fixture.join("comparisons.json"), &comparisons).unwrap();
    assert_each_fails(None, broken, &metrics, &comparisons, scratch.path());
}

/// A small simulated run (7 providers, one fault each, 2 items per family) through every stage,
/// then its report.html in the browser, and broken copies of it rejected.
#[test]
fn the_report_of_a_simulated_run_passes_the_browser_check() {
    require_browser();
    let ws = Workspace::new();
    let run = ws.run("run-browser");
    {
        let _one_at_a_time = crate::support::timed_section();
        let sim = Sim::start(&ws);
        ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
        ok(&mut ws.stage("ib-schedule", &run));
        ok(ws
            .stage("ib-fetch", &run)
            .args(["--endpoint-base", &sim.url, "--deadline-seconds", "1.5", "--env-file", "/nonexistent"])
            .arg("--send-credentials-to-simulator")
            .envs(crate::pipeline::SECRETS));
    }
    ws.derive(&run);
    let report = run.join("report.html");
    assert!(report.exists(), "ib-report wrote no report.html in {} (it wrote report.md)", run.display());
    let metrics = run.join("metrics.json");
    let comparisons = run.join("comparisons.json");
    let html = std::fs::read_to_string(&report).unwrap();
    let page =
        Page { report: &report, metrics: &metrics, comparisons: &comparisons, shots: ws.path("browser/screenshots") };
    assert_each_fails(
        Some(("simulated-run", page)),
        generic_breakages(&html),
        &metrics,
        &comparisons,
        &ws.path("browser"),
    );
}
