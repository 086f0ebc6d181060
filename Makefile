# inferbench: the pipeline as file-to-file rules. `make` runs the whole benchmark against
# simulated providers (no credentials needed); `make run` against the real providers. This
# header is the list of targets: `make help` prints it, and docs/reference/make.md is checked
# against it (cargo test --test e2e docs).
#
#   make                      build, start ib-sim, run every stage on a small selection
#   make run                  the same against the providers of the spec's table (.env)
#   make rescore RUN=<dir>    reconstruct → report again from the raw log, no network
#   make run-files RUN=<dir>  one run's rules alone, up to its report (or FILES=<its files>)
#   make import FROM=<dir> RUN=<dir>   a reference runner's run directory as a new run
#   make load TARGET=<url> MODEL=<id> RATES="4 8 16"   one endpoint under load (SEARCH="1 256": its capacity)
#   make search [SPEC=<spec>]   a capacity search (the spec's load.search) against simulated providers
#   make watch RUN=<dir>      a live, read-only view of a run (q quits; WATCH_FLAGS=--once)
#   make verify RUN=<dir>     check a run on its own: manifest, sealed log, provenance, re-derivation
#   make compare RUNS='runs/*/*' OUT=compare   many runs compared (ib-compare)
#   make test                 every test, after the gate: rustfmt and clippy, warnings as errors
#   make bench                benchmarks (BENCH_REQUESTS=N: the size of the large synthetic run)
#   make bench-compare        ib-compare over COMPARE_BENCH_RUNS (1,000) synthetic runs
#   make bench-peers          the load client beside vllm-bench, AIPerf and GuideLLM (PEERS_*)
#   make data                 regenerate the synthetic dataset
#   make data-sample          regenerate its 6-per-family sample
#   make bins                 build the release binaries, nothing else
#   make clean-sim            delete make's simulated run, so that the next `make` starts afresh
#   make help                 print this header
#
# Settings (override on the command line): WORKFLOW, SPEC, DATASET, PER_FAMILY, SAMPLE, RUN,
# RULES (the scoring rules: inferbench, or reference to reproduce the reference's figures).
#
# What make re-derives: every stage's outputs depend on the run files the stage reads and on
# the stage's binary, so new code re-derives exactly what it could change (cargo leaves an
# up-to-date binary's mtime alone: a binary is newer only when its code changed). The
# binaries are built first and the run's rules run in a sub-make, which sees the new mtimes.
# The fetch is the exception: its log is the record of what was sent, never re-derived.
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:
# The sub-makes read this file wherever make was started from (`make -f`, as the test does).
SELF         := $(abspath $(lastword $(MAKEFILE_LIST)))

WORKFLOW     ?= micro-single-task
PIPELINE     := pipelines/$(WORKFLOW)
SPEC         ?= $(PIPELINE)/spec.yaml
SIM_PROFILES ?= $(dir $(SPEC))sim-profiles.yaml
# The generated 721-item dataset (data/README.md); `make` selects a few items per family
# from it, the reference benchmark 200 (PER_FAMILY=200). A private release works the same way
# (DATASET=<dir>); a small one needs SAMPLE=--sample.
DATASET      ?= data/$(WORKFLOW)
SAMPLE       ?=
PER_FAMILY   ?= 6
DATA_SEED    ?= 20261129
# Overridable so that the Makefile's own test (tests/e2e/make.rs) can stand tiny scripts in
# for the stages and for cargo.
BIN          ?= target/release
CARGO        ?= cargo

# runs/ is a Hive-partitioned dataset: every run is `runs/workflow=<workflow>/run=<name>/`, so
# DuckDB, polars or Spark read `runs/*/*/<table>.parquet` with `workflow` and `run` as columns
# (docs/reference/run-directory.md). No table has a column of either name.
RUNS_ROOT    := runs/workflow=$(WORKFLOW)
# `make` keeps one simulated run per spec, dataset and selection and brings it up to date
# (`simulated` for the defaults; another spec or dataset gets its own, so it never meets a
# lock made for other inputs); `make run` starts a new run.
SIM_DEFAULTS := $(PIPELINE)/spec.yaml+data/$(WORKFLOW)+6
ifeq ($(SPEC)+$(DATASET)+$(PER_FAMILY)$(SAMPLE),$(SIM_DEFAULTS))
SIM_RUN      ?= $(RUNS_ROOT)/run=simulated
else
SIM_RUN      ?= $(RUNS_ROOT)/run=simulated-$(shell printf '%s' '$(SPEC)+$(DATASET)+$(PER_FAMILY)$(SAMPLE)' | sha256sum | cut -c1-8)
endif
# Computed once, here: a recursively expanded `date` would be evaluated at every reference,
# and a run straddling a second would write into two directories. The name is `run-` and the
# UTC start, which sorts by date; the leading letters keep a Hive reader from typing the
# partition as a date or a number (polars, given only dated names, reads them as datetimes and
# fails on its own pattern; a later `run=simulated` would not fit either).
ifndef RUN
RUN          := $(RUNS_ROOT)/run=run-$(shell date -u +%Y%m%d-%H%M%S)
endif
ENDPOINTS    ?= simulated
# The scoring rules the stages after the fetch apply (ib-reconstruct --rules): inferbench's
# definitions, or the reference runner's where inferbench deliberately differs.
RULES        ?= inferbench
FROM         ?=
# Extra flags for ib-watch (`make watch`), e.g. --once --json, --interval 1, --window 50.
WATCH_FLAGS  ?=
# Extra flags for ib-verify (`make verify`): --public-key <file or hex>, --sign <file or
# env:NAME>, --skip-rederive.
VERIFY_FLAGS ?=
# `make compare`: the runs (directories or globs, which ib-compare expands itself) and where
# the comparison goes; extra flags (--seed, --resamples, --confidence) in COMPARE_FLAGS.
RUNS         ?= runs/*/*
OUT          ?= compare
COMPARE_FLAGS ?=

# The files SPEC and DATASET bind a run to, as ib-select lists them (make rules, generated).
# Beside the runs, never inside one: a run directory holds only what its manifest lists. Named
# by everything the lock is made from, so that asking for a run with another spec, dataset or
# selection makes ib-select check it (and refuse) rather than make call it up to date.
INPUTS_MK    := runs/.deps/$(subst /,_,$(SPEC))+$(subst /,_,$(DATASET))+$(PER_FAMILY)$(SAMPLE).mk

.PHONY: all run load search rescore import watch verify test bench bins clean-sim data data-sample run-files compare bench-compare bench-peers help

all: bins
	@$(MAKE) -f $(SELF) --no-print-directory run-files RUN=$(SIM_RUN) ENDPOINTS=simulated
	@echo "report: $(SIM_RUN)/report.md (as a page: $(SIM_RUN)/report.html)"

run: bins
	@$(MAKE) -f $(SELF) --no-print-directory run-files RUN=$(RUN) ENDPOINTS=providers
	@echo "report: $(RUN)/report.md (as a page: $(RUN)/report.html)"

# One load curve for one endpoint, without writing a spec: ib-load-spec writes the load-sweep
# workflow for TARGET (an OpenAI-compatible base URL) serving MODEL into RUN/pipeline/, one
# step of DURATION seconds per rate of RATES (requests per second; ARRIVALS poisson, constant
# or gamma; MAX_TOKENS the answers' cap; TIMEOUT each request's deadline in seconds), and the
# pipeline runs to its report. INPUT_TOKENS and OUTPUT_TOKENS (a number, or MIN-MAX drawn
# uniformly) send synthetic prompts of that many o200k_base tokens asking for that many answer
# tokens instead of the dataset's items; PREFIX_TOKENS makes the first tokens of every prompt
# the same, and IGNORE_EOS=1 asks the server to answer to length (vLLM, SGLang). The API key
# is read from CREDENTIAL_ENV (IB_LOAD_API_KEY unless named); an endpoint that needs none is
# sent the placeholder `unused`. API names the wire API: chat-completions (the default),
# responses or messages.
TARGET         ?=
MODEL          ?=
RATES          ?=
CONCURRENCY    ?=
REQUESTS       ?= 20
DURATION       ?= 30
ARRIVALS       ?= poisson
MAX_TOKENS     ?=
TIMEOUT        ?=
INPUT_TOKENS   ?=
OUTPUT_TOKENS  ?=
PREFIX_TOKENS  ?=
IGNORE_EOS     ?=
CREDENTIAL_ENV ?= IB_LOAD_API_KEY
API            ?=
# A capacity search instead of RATES: its lowest and highest rate ("1 256"), how close a rate that
# fails must come to one that holds (TOLERANCE, a share), and at most MAX_PROBES probes of
# DURATION seconds each. OBJECTIVES sets the goodput's objectives over the template's, e.g.
# "e2e_ms=2000 ttft_ms=500 correct=false goodput_target=0.9" (ttfa_ms=off drops one).
SEARCH         ?=
TOLERANCE      ?= 0.05
MAX_PROBES     ?= 16
OBJECTIVES     ?=
# A new load run (or search) goes beside the others of its workflow, named by the time RUN was named.
ifeq ($(origin RUN),file)
LOAD_RUN       := $(subst $(RUNS_ROOT)/,runs/workflow=load/,$(RUN))
SEARCH_RUN     := $(subst $(RUNS_ROOT)/,runs/workflow=search/,$(RUN))
else
LOAD_RUN       := $(RUN)
SEARCH_RUN     := $(RUN)
endif
# A search's probes take every task of the dataset, unless told otherwise.
SEARCH_DATASET    := $(if $(filter command line,$(origin DATASET)),$(DATASET),data/micro-single-task)
SEARCH_PER_FAMILY := $(if $(filter command line,$(origin PER_FAMILY)),$(PER_FAMILY),200)
load: bins
	@[ -e '$(LOAD_RUN)/pipeline/spec.yaml' ] || $(BIN)/ib-load-spec --out '$(LOAD_RUN)/pipeline' --target '$(TARGET)' \
	    --model '$(MODEL)' $(if $(RATES),--rates '$(RATES)') $(if $(CONCURRENCY),--concurrency '$(CONCURRENCY)' --requests-per-user '$(REQUESTS)') \
	    $(if $(SEARCH),--search '$(SEARCH)' --tolerance '$(TOLERANCE)' --max-probes '$(MAX_PROBES)') \
	    $(if $(OBJECTIVES),--objectives '$(OBJECTIVES)') \
	    --duration '$(DURATION)' --arrivals '$(ARRIVALS)' --credential-env '$(CREDENTIAL_ENV)' $(if $(API),--api '$(API)') \
	    $(if $(MAX_TOKENS),--max-completion-tokens '$(MAX_TOKENS)') $(if $(TIMEOUT),--timeout-seconds '$(TIMEOUT)') \
	    $(if $(INPUT_TOKENS),--input-tokens '$(INPUT_TOKENS)') $(if $(OUTPUT_TOKENS),--output-tokens '$(OUTPUT_TOKENS)') \
	    $(if $(PREFIX_TOKENS),--prefix-tokens '$(PREFIX_TOKENS)') $(if $(IGNORE_EOS),--ignore-eos)
ifneq ($(SEARCH),)
	@$(CREDENTIAL_ENV)="$${$(CREDENTIAL_ENV):-unused}" $(BIN)/ib-search --run '$(LOAD_RUN)' \
	    --probe-command '$(call probe_rules,run-files,data/micro-single-task,200,providers,)'
	@echo "report: $(LOAD_RUN)/report.md (each probe's: $(LOAD_RUN)/probes/*/report.html)"
else
	@$(CREDENTIAL_ENV)="$${$(CREDENTIAL_ENV):-unused}" $(MAKE) -f $(SELF) --no-print-directory run-files \
	    RUN='$(LOAD_RUN)' SPEC='$(LOAD_RUN)/pipeline/spec.yaml' DATASET=data/micro-single-task PER_FAMILY=200 \
	    ENDPOINTS=providers
	@echo "report: $(LOAD_RUN)/report.md (as a page: $(LOAD_RUN)/report.html)"
endif

# A capacity search: SPEC's load section has `search` (lowest and highest rate, tolerance)
# instead of `rates`. ib-search runs one probe per measured rate, each a one-step load run of
# its own under RUN/probes/ made by this Makefile's rules, choosing the next rate from the
# probes so far until every provider's capacity is bracketed; RUN/search.json and RUN/report.md
# record the probes and what they found. Run the same command again to resume a stopped search.
# Against the simulated providers unless ENDPOINTS=providers.
# The simulated providers are those of sim-profiles.yaml beside the spec, unless SIM_PROFILES.
SEARCH_SPEC    := $(if $(filter command line,$(origin SPEC)),$(SPEC),pipelines/load-search/spec.yaml)
SEARCH_SIM     := $(if $(filter command line,$(origin SIM_PROFILES)),$(SIM_PROFILES),$(dir $(SEARCH_SPEC))sim-profiles.yaml)
search: bins
	$(BIN)/ib-search --spec '$(SEARCH_SPEC)' --run '$(SEARCH_RUN)' \
	    --probe-command '$(call probe_rules,run-files,$(SEARCH_DATASET),$(SEARCH_PER_FAMILY),$(ENDPOINTS),$(SEARCH_SIM))'
	@echo "report: $(SEARCH_RUN)/report.md (each probe's: $(SEARCH_RUN)/probes/*/report.html)"

# One probe of a search, as ib-search runs it ($(1) the goal: run-files, or rescore), with the
# probe's run and spec from the environment ib-search gives the command.
probe_rules = $(MAKE) -f $(SELF) --no-print-directory $(1) RUN="$$IB_PROBE_RUN" SPEC="$$IB_PROBE_SPEC" \
    DATASET=$(2) PER_FAMILY=$(3) ENDPOINTS=$(4) SIM_PROFILES=$(5)

ifneq ($(filter load,$(MAKECMDGOALS)),)
ifeq ($(TARGET)$(MODEL),)
$(error load: against what? make load TARGET=<base URL, e.g. http://127.0.0.1:8080/v1> MODEL=<model id> RATES="4 8 16" [DURATION=30])
endif
endif

# A capacity search's directory (search.json) is re-scored probe by probe.
IS_SEARCH := $(wildcard $(RUN)/search.json)

# Re-score an archived run offline with the current code: the same rules, with the log and
# what it was fetched for as sources (RESCORE, below), and every rule after the fetch made
# unconditionally (--always-make), whatever order a copied run's mtimes are in.
rescore: bins
ifneq ($(IS_SEARCH),)
	$(BIN)/ib-search --rescore --run '$(RUN)' \
	    --probe-command '$(call probe_rules,rescore,$(SEARCH_DATASET),$(SEARCH_PER_FAMILY),providers,)'
	@echo "report: $(RUN)/report.md"
else
	@$(MAKE) -f $(SELF) --no-print-directory --always-make run-files RUN=$(RUN) RESCORE=1
	@echo "report: $(RUN)/report.md (as a page: $(RUN)/report.html)"
endif

# A reference runner's run directory (FROM) as a new inferbench run (RUN), bound to SPEC and
# DATASET; then `make rescore RUN=…` scores it. Nothing in FROM is modified.
import: bins
	$(BIN)/ib-import --from $(FROM) --run $(RUN) --spec $(SPEC) --dataset $(DATASET) $(SAMPLE)
	@echo "imported: $(RUN); next: make rescore RUN=$(RUN) SPEC=$(SPEC) DATASET=$(DATASET)"

ifneq ($(filter import,$(MAKECMDGOALS)),)
ifndef FROM
$(error import: from where? make import FROM=<reference run directory> RUN=<new run directory>)
endif
ifeq ($(origin RUN),file)
$(error import: into which new run? make import FROM=$(FROM) RUN=<new run directory>)
endif
endif

# A live view of a run while `make run` (or `make`) fetches it in another terminal, or of any
# run at rest: read-only (it never writes into the run, nor takes its writer lock) and offline.
watch: bins
	$(BIN)/ib-watch --run $(RUN) $(WATCH_FLAGS)

ifneq ($(filter watch,$(MAKECMDGOALS)),)
ifeq ($(origin RUN),file)
$(error watch: which run? make watch RUN=<run directory> (make's own simulated run: RUN=$(SIM_RUN)))
endif
endif

# A run checked on its own, from its files (ib-verify): every file against its manifest, the
# sealed log against its seal and chain, every derived file's provenance, and reconstruct →
# report again in a temporary directory, compared byte for byte (with SPEC and DATASET, the
# inputs the run was locked with). Writes nothing into the run, except with --sign.
verify: bins
	$(BIN)/ib-verify '$(RUN)' --spec $(SPEC) --dataset $(DATASET) $(VERIFY_FLAGS)

ifneq ($(filter verify,$(MAKECMDGOALS)),)
ifeq ($(origin RUN),file)
$(error verify: which run? make verify RUN=<run directory> (make's own simulated run: RUN=$(SIM_RUN)))
endif
endif

# Checked before anything is built, as one line.
ifneq ($(filter rescore,$(MAKECMDGOALS)),)
ifeq ($(origin RUN),file)
$(error rescore: which run? make rescore RUN=<run directory>)
endif
ifeq ($(IS_SEARCH),)
ifeq ($(wildcard $(RUN)/events/*.jsonl $(RUN)/events/*.jsonl.zst),)
$(error rescore: $(RUN) has no event log ($(RUN)/events/); there is nothing to re-score)
endif
ifeq ($(wildcard $(RUN)/events.parquet),)
$(error rescore: $(RUN)'s fetch never finished (no events.parquet); make run RUN=$(RUN) resumes it)
endif
endif
endif

bins:
	$(CARGO) build --release --locked --bins

# Analysis across runs. ib-compare is the one package with polars (tools/compare), outside the
# workspace's default members: `bins` never builds it, this target does.
compare:
	$(CARGO) build --release --locked -p inferbench-compare
	$(BIN)/ib-compare --out '$(OUT)' $(foreach pattern,$(RUNS),'$(pattern)') $(COMPARE_FLAGS)

# The end-to-end test opens every Parquet output with Python polars, as a notebook would,
# queries runs/ as a Hive dataset with DuckDB, runs notebooks/analyses.py (polars, DuckDB and
# pandas: 69 MB, 157 MB with numpy; about 15 s and 70 s to install),
# runs the pipeline against real llama.cpp servers installed into $(LLAMA_VENV), opens
# report.html in headless Chromium (Debian's) through the pinned playwright-core that
# tests/browser/install.sh puts into tests/browser/node_modules (again whenever
# package-lock.json is newer than the install), runs the pipeline against aimock, a mock server
# of every wire API written independently of inferbench (tests/interop/install.sh puts the
# pinned package into tests/interop/node_modules the same way), and drives ib-watch's terminal
# view in tmux.
#
# Chromium and tmux are system packages: as root (CI, a container) apt-get installs them when
# missing (chromium without its recommends: 25 packages, 124 MB fetched, 414 MB installed,
# ~17 s); anyone else is stopped here, before any build or test, with the one command to run,
# rather than by three failing tests minutes later.
# IB_CHROMIUM (another Chromium, which the browser test then uses) stands in for chromium.
#
# The installs (apt-get, pip, the llama.cpp venv, npm: about 2 min 40 s one after another on a
# fresh machine, mostly waiting on the network) run in the background, each beside the others,
# while cargo builds; each one's output is shown only when it fails. One cargo build makes
# everything `cargo test --workspace` runs, ib-compare (which the e2e suite runs, and which
# cargo test builds only as its unit tests) and the benchmarks (kept building for `make bench`)
# with the same features, so no crate is compiled twice: `cargo build -p inferbench-compare`
# on its own resolves serde, tokio and hyper with other features than the workspace's tests,
# and compiled polars and most of the tree a second time.
# The gate: the workspace formatted as rustfmt formats it, and compiled without a warning, clippy's
# lints ([workspace.lints] in Cargo.toml and clippy's defaults) included. Clippy runs as the
# compiler of the workspace's own crates (RUSTC_WORKSPACE_WRAPPER) inside the one debug build the
# tests need, with its arguments passed as `cargo clippy -- -Dwarnings` passes them (CLIPPY_ARGS):
# `cargo clippy` would check every dependency again, polars among them, in a profile of its own.
# `cargo test` runs under the same two variables, so it reuses that build.
CLIPPY_DRIVER := $(shell command -v clippy-driver 2>/dev/null)
LINTED       := RUSTC_WORKSPACE_WRAPPER=$(CLIPPY_DRIVER) CLIPPY_ARGS=-Dwarnings
LLAMA_VENV := target/llama-venv
# The official OpenAI and Anthropic Python SDKs, whose own stream readers the e2e suite holds
# inferbench's reading of the same bytes to (tests/sdk/assemble.py): pinned, installed apart
# from the system's packages (pip --target; about 11 s and 86 MB).
SDK_PYTHON := target/sdk-python
SDK_DEPS   := openai==3.63.0 anthropic==2.17.0
BROWSER_DEPS := tests/browser/node_modules/.package-lock.json
INTEROP_DEPS := tests/interop/node_modules/.package-lock.json
SYSTEM_DEPS := chromium tmux
PYTHON_DEPS := polars duckdb pandas
test:
	@[ -n "$(CLIPPY_DRIVER)" ] || { echo "make test needs clippy and rustfmt: rustup component add clippy rustfmt" >&2; exit 1; }
	@$(CARGO) fmt --all --check >/dev/null || { $(CARGO) fmt --all --check | head -40; echo "make test: the files above are not formatted as rustfmt formats them; run cargo fmt --all" >&2; exit 1; }
	@missing=(); \
	for cmd in $(SYSTEM_DEPS); do \
	    [ $$cmd = chromium ] && [ -n "$${IB_CHROMIUM:-}" ] && continue; \
	    command -v $$cmd >/dev/null || missing+=($$cmd); \
	done; \
	if (( $${#missing[@]} )) && (( $$(id -u) != 0 )); then \
	    echo "make test needs $${missing[*]}, which only root can install; run first: sudo apt-get install --no-install-recommends $${missing[*]}" >&2; \
	    exit 1; \
	fi; \
	logs=$$(mktemp -d); declare -A installs=(); \
	if (( $${#missing[@]} )); then \
	    echo "installing $${missing[*]} (apt-get)"; \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
	      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 "$${missing[@]}"; \
	    } >"$$logs/apt-get" 2>&1 & installs[$$!]=apt-get; \
	fi; \
	python=(); for module in $(PYTHON_DEPS); do python3 -c "import $$module" 2>/dev/null || python+=($$module); done; \
	if (( $${#python[@]} )); then \
	    python3 -m pip install --quiet --disable-pip-version-check "$${python[@]}" >"$$logs/pip" 2>&1 & installs[$$!]=pip; \
	fi; \
	if ! $(LLAMA_VENV)/bin/python -c 'import xllamacpp' 2>/dev/null; then \
	    tests/llama/install.sh $(LLAMA_VENV) >"$$logs/llama" 2>&1 & installs[$$!]=llama; \
	fi; \
	if ! [ $(BROWSER_DEPS) -nt tests/browser/package-lock.json ]; then \
	    tests/browser/install.sh >"$$logs/browser" 2>&1 & installs[$$!]=browser; \
	fi; \
	if ! PYTHONPATH=$(SDK_PYTHON) python3 -c 'import openai, anthropic' 2>/dev/null; then \
	    python3 -m pip install --quiet --disable-pip-version-check --target $(SDK_PYTHON) $(SDK_DEPS) >"$$logs/sdk" 2>&1 & installs[$$!]=sdk; \
	fi; \
	if ! [ $(INTEROP_DEPS) -nt tests/interop/package-lock.json ]; then \
	    tests/interop/install.sh >"$$logs/interop" 2>&1 & installs[$$!]=interop; \
	fi; \
	built=0; $(LINTED) $(CARGO) build --workspace --locked --bins --tests --benches --examples || built=$$?; \
	failed=0; for pid in "$${!installs[@]}"; do \
	    wait $$pid && continue; \
	    failed=1; echo "make test: the $${installs[$$pid]} install failed:" >&2; cat "$$logs/$${installs[$$pid]}" >&2; \
	done; \
	rm -rf "$$logs"; \
	(( ! failed && ! built ))
	IB_LLAMA_PYTHON=$(CURDIR)/$(LLAMA_VENV)/bin/python IB_SDK_PYTHONPATH=$(CURDIR)/$(SDK_PYTHON) \
	    $(LINTED) $(CARGO) test --workspace --locked

# `make bench` measures issue 9's targets too: the rescore of a 6,000-request run, and a run of
# BENCH_REQUESTS requests made by ib-synth (0 skips it; e.g. BENCH_REQUESTS=20000 for a quick
# run). The large run needs ~22 KB of disk per request while it is measured (deleted after);
# see BENCHMARKS.md. Then the fleet benchmark: one ib-fetch against 1,000 simulated providers
# (and 10), its launch skew and gap between rounds (IB_FLEET_SIZES changes the sizes). Then the
# load benchmark: ib-fetch sending an open-loop load to a zero-latency ib-sim streaming one token
# per event, one run per arrival process and rate, its send lag, achieved rate, CPU per 1,000
# requests and peak memory (IB_LOAD_RATES, IB_LOAD_ARRIVALS, IB_LOAD_SECONDS; IB_LOAD_PROFILE=
# poisson:2000 profiles that run's fetch with perf and says where its CPU went).
BENCH_REQUESTS ?= 1000000
bench: bins
	BENCH_REQUESTS=$(BENCH_REQUESTS) $(CARGO) bench --locked --bench pipeline
	$(CARGO) bench --locked --bench fleet
	$(CARGO) bench --locked --bench load

# ib-compare at scale: COMPARE_BENCH_RUNS synthetic scored runs of 6,000 responses each
# (tools/compare/examples/synth_runs.rs) compared under GNU time. Not part of `make bench`:
# it builds polars in release, which takes longer than every other build of the project.
COMPARE_BENCH_RUNS ?= 1000
bench-compare:
	$(CARGO) build --release --locked -p inferbench-compare --bins --examples
	rm -rf target/bench/compare-runs target/bench/compare-out
	$(BIN)/examples/synth_runs target/bench/compare-runs $(COMPARE_BENCH_RUNS) 6000
	/usr/bin/time -f 'ib-compare: %e s wall, peak RSS %M KB' \
	    $(BIN)/ib-compare --out target/bench/compare-out 'target/bench/compare-runs/*/*'
	rm -rf target/bench/compare-runs

# inferbench's load client beside three peer load generators, vllm-bench, AIPerf and GuideLLM,
# against one ib-sim at zero latency on the same machine, at each rate of PEERS_RATES for
# PEERS_SECONDS, for each arrival process of PEERS_ARRIVALS (benches/peers/run.sh; results in
# target/bench/peers/<time>/summary.md). Not part of `make bench`: its first run installs
# AIPerf and GuideLLM from PyPI into target/peers-venv (about 6.5 GB: GuideLLM requires torch,
# whose wheel pulls the CUDA libraries), and builds vllm-bench from PEERS_VLLM_BENCH (a
# binary, a source directory or a git URL) into target/peers-vllm-bench; without it,
# vllm-bench is absent and the script says so. PEERS_TIME_SCALE=20 makes the provider slow (its
# profile's delays × 20: thousands of streams open at once at 500 req/s).
PEERS_RATES    ?= 50 200 500 2000
PEERS_SECONDS  ?= 15
PEERS_ARRIVALS ?= constant
PEERS_TOOLS    ?= inferbench vllm-bench aiperf guidellm
bench-peers: bins
	PEERS_RATES='$(PEERS_RATES)' PEERS_SECONDS='$(PEERS_SECONDS)' PEERS_ARRIVALS='$(PEERS_ARRIVALS)' \
	    PEERS_TOOLS='$(PEERS_TOOLS)' PEERS_VLLM_BENCH='$(PEERS_VLLM_BENCH)' BIN='$(BIN)' benches/peers/run.sh

clean-sim:
	rm -rf $(SIM_RUN)

# The header of this file, the list of targets.
help:
	@sed -n '/^[^#]/q; s/^# \{0,1\}//p' $(SELF)

# The same seed always writes byte-identical files; data/README.md records their SHA-256.
data: bins
	$(BIN)/ib-data generate --seed $(DATA_SEED) --out data/$(WORKFLOW)

data-sample: bins
	$(BIN)/ib-data generate --seed $(DATA_SEED) --sample 6 --out data/$(WORKFLOW)-sample

# The run's rules, for the sub-make (or anyone asking for one of RUN's files). The top-level
# make never reads them: on a fresh clone the binaries they need do not exist yet. The sub-make
# asks for them as `run-files`: a goal on make's command line that holds `=`, as a path under
# `runs/workflow=…/run=…/` does, is read as a variable assignment, never as a target.
ifneq ($(filter run-files $(RUN)/%,$(MAKECMDGOALS)),)

# Every file of RUN up to its report (`make run-files RUN=<dir>`), or up to the ones FILES
# names (`make run-files RUN=<dir> FILES=schedule.parquet`).
FILES        ?= report.md report.html manifest.json
run-files: $(addprefix $(RUN)/,$(FILES))

ifdef RESCORE
# No rule makes lock.json, selection.parquet, schedule.parquet or events.parquet: nothing can
# select, schedule or fetch again, and a missing one is an error.
else

# ib-select --list-inputs prints the files a run is locked to (the spec, the provider table
# and the prompt templates it names, the dataset's files), from the code that writes the lock.
LOCK_INPUTS :=
include $(INPUTS_MK)
$(INPUTS_MK): $(SPEC) $(BIN)/ib-select
	@mkdir -p $(@D)
	$(BIN)/ib-select --list-inputs --spec $(SPEC) --dataset $(DATASET) | sed 's/^/LOCK_INPUTS += /' >$@
# A missing input is ib-select's to report, naming what is wrong, rather than make's.
$(LOCK_INPUTS):

# Locks a new run, or checks an existing one against inputs (or code) newer than its lock:
# a changed input is refused by name (exit 4). ib-select leaves an unchanged lock alone;
# touching it records the check, so the next make does not check again.
# Precious: on a failed recipe GNU make 4.3 deletes every member of a grouped target it has
# not looked at yet, changed or not, and a refused check must never cost the run its lock or
# selection (ib-select writes both atomically, the lock last).
.PRECIOUS: $(RUN)/lock.json $(RUN)/selection.parquet
$(RUN)/lock.json $(RUN)/selection.parquet &: $(LOCK_INPUTS) $(INPUTS_MK) $(BIN)/ib-select
	$(BIN)/ib-select --run $(RUN) --spec $(SPEC) --dataset $(DATASET) --per-family $(PER_FAMILY) $(SAMPLE)
	@touch $(RUN)/lock.json $(RUN)/selection.parquet

# Once the fetch has begun, the schedule is part of the record: every log segment names its
# hash, and new code would write its own version into a re-derived one. Its prerequisites then
# turn order-only: a newer input still has the lock checked first, but neither that check
# nor a rebuilt ib-schedule re-derives the schedule the log was fetched for.
FETCHED := $(wildcard $(RUN)/events)
$(RUN)/schedule.parquet: $(if $(FETCHED),|) $(RUN)/lock.json $(RUN)/selection.parquet $(BIN)/ib-schedule
	$(BIN)/ib-schedule --run $(RUN) --spec $(SPEC)

# The fetch runs while the run has no sealed log (a new run, or a killed fetch, which
# resumes). Order-only on everything: a rebuilt ib-fetch never sends a request again, nor does
# a schedule with a newer mtime (say, a copied run). Precious: make never deletes the log.
.PRECIOUS: $(RUN)/events.parquet
$(RUN)/events.parquet: | $(RUN)/schedule.parquet $(BIN)/ib-fetch $(if $(filter simulated,$(ENDPOINTS)),$(BIN)/ib-sim)
ifeq ($(ENDPOINTS),simulated)
	url_file=$$(mktemp); \
	$(BIN)/ib-sim --profiles $(SIM_PROFILES) --spec $(SPEC) --dataset $(DATASET) --port-file $$url_file >/dev/null & sim=$$!; \
	trap 'kill $$sim 2>/dev/null; rm -f $$url_file' EXIT; \
	for _ in $$(seq 200); do [ -s $$url_file ] && break; sleep 0.05; done; \
	[ -s $$url_file ] || { echo "ib-sim did not start" >&2; exit 1; }; \
	$(BIN)/ib-fetch --run $(RUN) --spec $(SPEC) --dataset $(DATASET) --endpoint-base "$$(cat $$url_file)"
else
	$(BIN)/ib-fetch --run $(RUN) --spec $(SPEC) --dataset $(DATASET)
endif

endif # RESCORE

$(RUN)/responses.parquet: $(RUN)/events.parquet $(RUN)/schedule.parquet $(BIN)/ib-reconstruct
	$(BIN)/ib-reconstruct --run $(RUN) --rules $(RULES)

$(RUN)/evaluations.parquet: $(RUN)/responses.parquet $(BIN)/ib-evaluate
	$(BIN)/ib-evaluate --run $(RUN) --spec $(SPEC) --dataset $(DATASET)

# Not precious: when a stage fails, make may delete all its outputs (see the lock), and a
# derived file deleted is only re-derived.
$(RUN)/metrics.json $(RUN)/metrics.parquet $(RUN)/pooled.parquet $(RUN)/comparisons.json &: $(RUN)/responses.parquet $(RUN)/evaluations.parquet $(RUN)/schedule.parquet $(BIN)/ib-aggregate
	$(BIN)/ib-aggregate --run $(RUN) --spec $(SPEC)

$(RUN)/report.md $(RUN)/report.html $(RUN)/manifest.json &: $(RUN)/metrics.json $(RUN)/metrics.parquet $(RUN)/pooled.parquet $(RUN)/comparisons.json $(RUN)/responses.parquet $(RUN)/schedule.parquet $(BIN)/ib-report
	$(BIN)/ib-report --run $(RUN) --spec $(SPEC)

endif # the run's rules
