#!/usr/bin/env node
// Checks inferbench's report.html as a reader's browser shows it: headless Debian Chromium
// (driven by playwright-core), the page opened from file:// with every network request
// blocked. The page contract it checks is in tests/browser/README.md.
//
//   node tests/browser/check-report.mjs REPORT.html METRICS.json COMPARISONS.json OUT_DIR [REPORT.html METRICS.json COMPARISONS.json OUT_DIR ...]
//
// Chromium is /usr/bin/chromium or $IB_CHROMIUM; one browser checks every report given (a
// start costs seconds), each in contexts of its own. Screenshots (desktop.png, phone.png) go to
// each report's OUT_DIR. For each report, in order, prints one JSON line: on success `ok: true`
// with what was checked (ready_ms, views, charts, metrics_checked, …), otherwise `ok: false`
// with every problem found (`found`), each also printed on stderr, one per line. Exits 0 when
// every report passed, 1 when one did not; 2 when the checker could not run (usage, no
// Chromium, no playwright-core).
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const VIEWS = [
  "leaderboard", "tokens-per-second", "e2e-tail", "ttfa", "accuracy-failures", "pair",
  "distributions", "speed-vs-start", "outcomes", "timeline", "pair-differences",
  "failure-log", "provenance",
];
// Per provider, at least one element must show each of these combined_provider_metrics figures.
const REQUIRED_PROVIDER_METRICS = ["ttfa_p50", "e2e_latency_p99", "output_tokens_per_second_p50"];
const READY_WITHIN_MS = 2000;
const CHROMIUM_FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--host-resolver-rules=MAP * ~NOTFOUND",
];
// Not network: the page itself and what it makes in memory.
const LOCAL = /^(file|data|blob|about):/;

function die(message) {
  console.error(`check-report: ${message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 4 !== 0) {
  die("usage: check-report.mjs REPORT.html METRICS.json COMPARISONS.json OUT_DIR [REPORT.html METRICS.json COMPARISONS.json OUT_DIR ...]");
}
const chromiumPath = process.env.IB_CHROMIUM || "/usr/bin/chromium";
if (!existsSync(chromiumPath)) {
  die(`${chromiumPath} not found: install Debian's Chromium (apt-get install --no-install-recommends chromium; .ci/run does) or set IB_CHROMIUM`);
}
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch (e) {
  die(`playwright-core is not installed next to this script (${e.code || e.message}): run tests/browser/install.sh (make test does)`);
}
function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    die(`${file}: ${e.message}`);
  }
}
// The report being checked: its page's URL, what was found wrong in it, what it asked for.
// The reports are checked one after another, so the helpers below read these.
let reportUrl = null;
let problems = [];
const problem = (text) => problems.push(text);
let run = null;

// RFC 6901: "" is the whole document; "~1" is "/", "~0" is "~"; array indices are decimal.
function resolvePointer(doc, pointer) {
  if (pointer === "") return { found: true, value: doc };
  if (!pointer.startsWith("/")) return { found: false, why: "does not start with /" };
  let node = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) >= node.length) {
        return { found: false, why: `no element ${JSON.stringify(key)} in an array of ${node.length}` };
      }
      node = node[Number(key)];
    } else if (node !== null && typeof node === "object") {
      if (!Object.prototype.hasOwnProperty.call(node, key)) return { found: false, why: `no key ${JSON.stringify(key)}` };
      node = node[key];
    } else {
      return { found: false, why: `${JSON.stringify(key)} under a ${node === null ? "null" : typeof node}` };
    }
  }
  return { found: true, value: node };
}

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

// Each data-metric[-SUFFIX] / data-comparison[-SUFFIX] against its file: data-value[-SUFFIX]
// is JSON number text or null, equal (as a parsed double, or null) to the value the pointer names.
function checkValues(found, doc, file) {
  let checked = 0;
  for (const { attr, pointer, value, valueAttr, where } of found) {
    const target = resolvePointer(doc, pointer);
    if (!target.found) {
      problem(`${where}: ${attr}="${pointer}" names nothing in ${file} (${target.why})`);
      continue;
    }
    const expected = target.value;
    if (expected !== null && typeof expected !== "number") {
      problem(`${where}: ${attr}="${pointer}" is a ${Array.isArray(expected) ? "array" : typeof expected} in ${file}, not a number or null`);
      continue;
    }
    let shown;
    if (value === null) {
      problem(`${where}: ${attr}="${pointer}" has no ${valueAttr}`);
      continue;
    } else if (value === "null") {
      shown = null;
    } else if (JSON_NUMBER.test(value)) {
      shown = Number(value);
    } else {
      problem(`${where}: ${attr}="${pointer}" ${valueAttr}="${value}" is neither JSON number text nor null`);
      continue;
    }
    if (!(shown === null ? expected === null : expected !== null && Object.is(shown, expected))) {
      problem(`${where}: ${attr}="${pointer}" ${valueAttr}="${value}", but ${file} has ${JSON.stringify(expected)}`);
    }
    checked++;
  }
  return checked;
}

// In the page: every chart visible now, with its size and each series' elements.
function chartsInPage() {
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return { w: r.width, h: r.height };
  };
  const lineLike = new Set(["line", "polyline", "path"]);
  return [...document.querySelectorAll("svg[data-chart]")].map((svg, index) => {
    const name = svg.getAttribute("data-chart");
    const visible = svg.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    const { w, h } = box(svg);
    const pair = svg.closest("[data-pair]")?.getAttribute("data-pair") ?? null;
    const scope = svg.closest("[data-scope]")?.getAttribute("data-scope") ?? null;
    const view = svg.closest("section.view")?.getAttribute("data-view") ?? null;
    const declared = (svg.getAttribute("data-series") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    const series = declared.map((s) => {
      const els = [...svg.querySelectorAll("[data-series]")].filter((el) => el.getAttribute("data-series") === s);
      const shown = els.filter((el) => {
        if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
        const b = box(el);
        return (b.w > 0 && b.h > 0) || (lineLike.has(el.localName) && b.w + b.h > 0);
      });
      return { name: s, elements: els.length, shown: shown.length };
    });
    return { index, name, visible, w, h, pair, scope, view, declared: svg.getAttribute("data-series"), series };
  });
}

async function openPage(browser, options, label) {
  const context = await browser.newContext({ ...options, offline: true, javaScriptEnabled: true });
  run.contexts.push(context);
  await context.route("**", (route) => {
    const url = route.request().url();
    return LOCAL.test(url) ? route.continue() : route.abort("blockedbyclient");
  });
  context.on("websocket", (ws) => problem(`${label}: the page opened a WebSocket to ${ws.url()}`));
  const page = await context.newPage();
  page.on("console", (msg) => {
    if (msg.type() === "error" || msg.type() === "warning" || msg.type() === "assert") {
      const loc = msg.location();
      problem(`${label}: console ${msg.type()}: ${msg.text()}${loc?.url ? ` (${loc.url}:${loc.lineNumber})` : ""}`);
    }
  });
  page.on("pageerror", (err) => problem(`${label}: uncaught exception in the page: ${err.message}`));
  page.on("request", (req) => {
    const url = req.url();
    if (!LOCAL.test(url)) run.network.push(`${label}: ${req.method()} ${url}`);
    else if (url.startsWith("file:") && url !== reportUrl) run.fileRequests.add(url);
  });
  page.on("requestfailed", (req) => {
    problem(`${label}: request failed: ${req.url()} (${req.failure()?.errorText ?? "?"})`);
  });
  // When the page sets data-report-ready="1", by the page's own clock (ms since navigation).
  await page.addInitScript(() => {
    new MutationObserver(() => {
      const root = document.documentElement;
      if (root && root.getAttribute("data-report-ready") === "1" && window.__ibReadyAt === undefined) {
        window.__ibReadyAt = performance.now();
      }
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-report-ready"] });
  });
  await page.goto(reportUrl, { waitUntil: "load", timeout: 15000 });
  let ready = true;
  try {
    await page.waitForFunction(
      () => document.documentElement.getAttribute("data-report-ready") === "1" || document.documentElement.hasAttribute("data-report-error"),
      null, { timeout: READY_WITHIN_MS, polling: 10 });
  } catch {
    ready = false;
  }
  const state = await page.evaluate(() => {
    const root = document.documentElement;
    const nav = performance.getEntriesByType("navigation")[0];
    return {
      lang: root.getAttribute("lang"),
      ready: root.getAttribute("data-report-ready"),
      error: root.getAttribute("data-report-error"),
      readyAt: window.__ibReadyAt ?? null,
      loadAt: nav ? nav.loadEventStart : null,
    };
  });
  if (state.error !== null) problem(`${label}: html[data-report-error] is set: ${state.error}`);
  if (!ready || state.ready !== "1") {
    problem(`${label}: html[data-report-ready] is ${JSON.stringify(state.ready)}, not "1", ${READY_WITHIN_MS} ms after the load event`);
  } else if (state.readyAt !== null && state.loadAt !== null && state.readyAt - state.loadAt > READY_WITHIN_MS) {
    problem(`${label}: data-report-ready="1" came ${Math.round(state.readyAt - state.loadAt)} ms after the load event (limit ${READY_WITHIN_MS} ms)`);
  }
  if (state.lang !== "en") problem(`${label}: <html lang> is ${JSON.stringify(state.lang)}, not "en"`);
  return { context, page, state };
}

// Picks `value` in the select `id` and checks that exactly the [attr=value] elements show.
async function pick(page, id, attr, value) {
  await page.selectOption(`#${id}`, value, { timeout: 5000 });
  const wrong = await page.evaluate(({ attr, value }) => {
    const out = [];
    const all = [...document.querySelectorAll(`[${attr}]`)];
    if (!all.some((el) => el.getAttribute(attr) === value)) out.push(`no [${attr}="${value}"] element`);
    for (const el of all) {
      const mine = el.getAttribute(attr) === value;
      const shows = el.checkVisibility({ checkVisibilityCSS: true });
      const tag = `<${el.localName} ${attr}="${el.getAttribute(attr)}">`;
      if (mine && (!shows || el.hasAttribute("hidden"))) out.push(`${tag} is hidden`);
      if (!mine && !el.hasAttribute("hidden")) out.push(`${tag} has no hidden attribute`);
      if (!mine && shows) out.push(`${tag} is visible`);
    }
    return out;
  }, { attr, value });
  for (const w of wrong) problem(`#${id} = "${value}": ${w}`);
}

function checkCharts(charts, seen, context) {
  for (const c of charts) {
    if (!c.visible) continue;
    const key = `${c.index}`;
    const label = `svg[data-chart="${c.name}"]${c.pair ? ` in [data-pair="${c.pair}"]` : ""}${c.scope ? ` in [data-scope="${c.scope}"]` : ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (!(c.w > 0 && c.h > 0)) problem(`${context}: ${label} is ${c.w}×${c.h} px`);
    if (c.series.length === 0) problem(`${context}: ${label} has no data-series names (data-series=${JSON.stringify(c.declared)})`);
    for (const s of c.series) {
      if (s.elements === 0) problem(`${context}: ${label}: series "${s.name}" has no [data-series="${s.name}"] element inside it`);
      else if (s.shown === 0) problem(`${context}: ${label}: series "${s.name}": none of its ${s.elements} element(s) shows (zero size or hidden)`);
    }
  }
}

function spread(values) {
  if (values.length <= 3) return values;
  return [values[0], values[Math.floor(values.length / 2)], values[values.length - 1]];
}

// Checks one report in `browser`; returns whether it passed.
async function checkOne(browser, [reportArg, metricsArg, comparisonsArg, outArg]) {
  const started = Date.now();
  const metrics = readJson(metricsArg);
  const comparisons = readJson(comparisonsArg);
  const reportPath = path.resolve(reportArg);
  if (!existsSync(reportPath)) die(`${reportPath} not found`);
  reportUrl = pathToFileURL(reportPath).href;
  const outDir = path.resolve(outArg);
  mkdirSync(outDir, { recursive: true });
  problems = [];
  run = { ready_ms: null, load_ms: null, network: [], fileRequests: new Set(), contexts: [] };

  // As written, before any script runs: <html lang="en" data-report-ready="0">.
  {
    const source = readFileSync(reportPath, "utf8");
    const tag = /<html\b[^>]*>/i.exec(source)?.[0];
    if (!tag) problem("the file has no <html> tag");
    else {
      if (!/\slang\s*=\s*["']?en["'\s>]/i.test(tag)) problem(`${tag}: no lang="en"`);
      if (!/\sdata-report-ready\s*=\s*["']?0["'\s>]/i.test(tag)) problem(`${tag}: does not start with data-report-ready="0"`);
    }
  }

  const summary = { report: reportPath, bytes: statSync(reportPath).size };
  try {
    // Desktop: the contract, the values, the selectors, the charts.
    const desk = await openPage(browser, { viewport: { width: 1280, height: 800 } }, "desktop");
    const page = desk.page;
    summary.ready_ms = desk.state.readyAt === null ? null : Math.round(desk.state.readyAt * 10) / 10;
    summary.load_ms = desk.state.loadAt === null ? null : Math.round(desk.state.loadAt * 10) / 10;

    const dom = await page.evaluate((names) => {
      const views = names.map((name) => {
        const matches = document.querySelectorAll(`#view-${CSS.escape(name)}`);
        const el = matches[0];
        return {
          name,
          count: matches.length,
          section: el ? el.localName === "section" && el.classList.contains("view") : false,
          dataView: el ? el.getAttribute("data-view") : null,
          h2: el ? (el.querySelector("h2")?.textContent ?? "").trim() : "",
          howTo: el ? (el.querySelector("p.how-to-read")?.textContent ?? "").trim() : "",
          tableOrChart: el ? el.querySelectorAll("table, svg[data-chart]").length : 0,
        };
      });
      const where = (el) => {
        const view = el.closest("section.view");
        return view ? `#${view.id}` : "outside any view";
      };
      // data-metric with data-value, and data-metric-SUFFIX with data-value-SUFFIX (an element
      // showing two figures, such as a point's x and y).
      const grab = (attr) => {
        const named = new RegExp(`^${attr}(-[a-z0-9]+)?$`);
        const out = [];
        for (const el of document.querySelectorAll("*")) {
          for (const a of el.attributes) {
            const m = named.exec(a.name);
            if (!m) continue;
            const suffix = m[1] ?? "";
            out.push({ attr: a.name, pointer: a.value, value: el.getAttribute(`data-value${suffix}`), valueAttr: `data-value${suffix}`, where: where(el) });
          }
        }
        return out;
      };
      const options = (id) => {
        const s = document.getElementById(id);
        return s ? [...s.options].map((o) => o.value) : null;
      };
      return {
        views,
        otherViews: [...document.querySelectorAll("section.view")].map((s) => s.getAttribute("data-view")).filter((v) => !names.includes(v)),
        metrics: grab("data-metric"),
        comparisons: grab("data-comparison"),
        pairs: options("pair-select"),
        scopes: options("scope-select"),
      };
    }, VIEWS);

    for (const v of dom.views) {
      const at = `#view-${v.name}`;
      if (v.count === 0) { problem(`${at}: missing`); continue; }
      if (v.count > 1) problem(`${at}: ${v.count} elements have this id`);
      if (!v.section) problem(`${at}: not a <section class="view">`);
      if (v.dataView !== v.name) problem(`${at}: data-view is ${JSON.stringify(v.dataView)}, not "${v.name}"`);
      if (!v.h2) problem(`${at}: no <h2> with text`);
      if (!v.howTo) problem(`${at}: no <p class="how-to-read"> with text`);
      if (!v.tableOrChart) problem(`${at}: neither a <table> nor an <svg data-chart>`);
    }
    summary.views = dom.views.filter((v) => v.count > 0).length;

    summary.metrics_checked = checkValues(dom.metrics, metrics, path.basename(metricsArg));
    summary.comparisons_checked = checkValues(dom.comparisons, comparisons, path.basename(comparisonsArg));
    const shown = new Set(dom.metrics.map((m) => m.pointer));
    const rows = Array.isArray(metrics.combined_provider_metrics) ? metrics.combined_provider_metrics : [];
    if (rows.length === 0) problem(`${path.basename(metricsArg)} has no combined_provider_metrics`);
    const providers = [...new Set(rows.map((r) => r.provider))];
    const families = [...new Set((Array.isArray(metrics.task_family_metrics) ? metrics.task_family_metrics : []).map((r) => r.task_family))];
    for (const provider of providers) {
      for (const key of REQUIRED_PROVIDER_METRICS) {
        const any = rows.some((r, i) => r.provider === provider && shown.has(`/combined_provider_metrics/${i}/${key}`));
        if (!any) problem(`no [data-metric="/combined_provider_metrics/<i>/${key}"] for provider ${provider}`);
      }
    }

    // Charts visible as the page opens, then each selection's.
    const seen = new Set();
    checkCharts(await page.evaluate(chartsInPage), seen, "as opened");
    summary.pairs_checked = [];
    summary.scopes_checked = [];
    for (const [id, attr, values, list, chartView] of [
      ["pair-select", "data-pair", dom.pairs, summary.pairs_checked, "pair-differences"],
      ["scope-select", "data-scope", dom.scopes, summary.scopes_checked, null],
    ]) {
      if (values === null) { problem(`no <select id="${id}">`); continue; }
      if (values.length === 0) { problem(`<select id="${id}"> has no options`); continue; }
      if (id === "pair-select") {
        for (const v of values) {
          const two = v.split("|");
          if (two.length !== 2 || two.some((p) => !providers.includes(p))) {
            problem(`<select id="pair-select"> option "${v}" is not "A|B" for two providers of combined_provider_metrics`);
          }
        }
      } else {
        if (!values.includes("pooled")) problem(`<select id="scope-select"> has no "pooled" option`);
        for (const v of values) {
          if (v !== "pooled" && !families.includes(v)) problem(`<select id="scope-select"> option "${v}" is neither "pooled" nor a task family of task_family_metrics`);
        }
        for (const f of families) {
          if (!values.includes(f)) problem(`<select id="scope-select"> has no option for the task family "${f}"`);
        }
      }
      const initial = await page.$eval(`#${id}`, (s) => s.value);
      const picked = spread(values);
      // Every option once, so that every chart it hides is seen; the spread ones in full.
      for (const value of values) {
        if (picked.includes(value)) {
          await pick(page, id, attr, value);
          list.push(value);
        } else {
          await page.selectOption(`#${id}`, value, { timeout: 5000 });
        }
        const charts = await page.evaluate(chartsInPage);
        checkCharts(charts, seen, `#${id} = "${value}"`);
        if (picked.includes(value) && id === "pair-select") {
          // The pair view is drawn by the page's script for the chosen pair: its figures keep
          // the same contract as those written into the page.
          const drawn = await page.evaluate((value) => {
            const holders = [...document.querySelectorAll("#view-pair [data-pair]")].filter((el) => el.getAttribute("data-pair") === value);
            if (holders.length === 0) return null;
            const marks = (attr) => holders.flatMap((h) => [...h.querySelectorAll(`[${attr}]`)]).map((el) => ({
              attr, pointer: el.getAttribute(attr), value: el.getAttribute("data-value"), valueAttr: "data-value",
              where: `#view-pair [data-pair="${value}"]`,
            }));
            return { metrics: marks("data-metric"), comparisons: marks("data-comparison") };
          }, value);
          if (drawn === null) {
            problem(`#${id} = "${value}": #view-pair shows no [data-pair="${value}"]`);
          } else {
            if (drawn.metrics.length + drawn.comparisons.length === 0) {
              problem(`#${id} = "${value}": #view-pair [data-pair="${value}"] shows no [data-metric] or [data-comparison] figure`);
            }
            summary.metrics_checked += checkValues(drawn.metrics, metrics, path.basename(metricsArg));
            summary.comparisons_checked += checkValues(drawn.comparisons, comparisons, path.basename(comparisonsArg));
          }
        }
        if (picked.includes(value)) {
          const mine = charts.filter((c) => c.visible && (attr === "data-pair" ? c.pair : c.scope) === value
            && (chartView === null || c.view === chartView));
          if (mine.length === 0) {
            problem(`#${id} = "${value}": no visible svg[data-chart] inside [${attr}="${value}"]${chartView ? ` in #view-${chartView}` : ""}`);
          }
        }
      }
      await page.selectOption(`#${id}`, initial, { timeout: 5000 });
    }
    const allCharts = await page.evaluate(chartsInPage);
    for (const c of allCharts) {
      if (!seen.has(`${c.index}`)) problem(`svg[data-chart="${c.name}"] is never visible, under any selection`);
    }
    summary.charts = allCharts.length;
    summary.series_checked = allCharts.reduce((n, c) => n + c.series.length, 0);

    await page.screenshot({ path: path.join(outDir, "desktop.png"), fullPage: true });

    // Print: every view shows.
    await page.emulateMedia({ media: "print" });
    const hiddenInPrint = await page.evaluate((names) => names.filter((n) => {
      const el = document.getElementById(`view-${n}`);
      return el && !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    }), VIEWS);
    for (const n of hiddenInPrint) problem(`print: #view-${n} is hidden`);
    await desk.context.close();

    // Phone: no horizontal page scroll.
    const phone = await openPage(browser, {
      viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
    }, "phone");
    const widths = await phone.page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
    }));
    if (widths.scroll > 390) problem(`phone: the page scrolls sideways (scrollWidth ${widths.scroll} px > 390 px)`);
    summary.phone_scroll_width = widths.scroll;
    await phone.page.screenshot({ path: path.join(outDir, "phone.png"), fullPage: true });
    await phone.context.close();
  } catch (e) {
    problem(`the check stopped: ${e.message.split("\n")[0]}`);
  } finally {
    // Closed before the next report, so that nothing this page does is counted against it.
    for (const context of run.contexts) await context.close().catch(() => {});
  }

  for (const r of run.network) problem(`a request not to file: (blocked): ${r}`);
  summary.other_files_loaded = [...run.fileRequests];
  summary.screenshots = ["desktop.png", "phone.png"].map((f) => path.join(outDir, f)).filter(existsSync);
  summary.seconds = Math.round((Date.now() - started) / 100) / 10;
  if (problems.length > 0) {
    for (const p of problems) console.error(`check-report: ${p}`);
    console.error(`check-report: ${problems.length} problem(s) in ${reportPath}`);
    console.log(JSON.stringify({ ok: false, problems: problems.length, found: problems, ...summary }));
    return false;
  }
  console.log(JSON.stringify({ ok: true, ...summary }));
  return true;
}

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: CHROMIUM_FLAGS,
  timeout: 30000,
}).catch((e) => die(`could not start ${chromiumPath}: ${e.message}`));
let allPassed = true;
for (let i = 0; i < args.length; i += 4) {
  // A page that hangs the browser must not hang the test.
  const watchdog = setTimeout(() => {
    console.error(`check-report: gave up on ${args[i]} after 120 s`);
    process.exit(1);
  }, 120000);
  allPassed = (await checkOne(browser, args.slice(i, i + 4))) && allPassed;
  clearTimeout(watchdog);
}
await browser.close().catch(() => {});
process.exit(allPassed ? 0 : 1);
