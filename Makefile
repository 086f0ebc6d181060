# inferbench: the pipeline as file-to-file rules. `make` runs the whole benchmark against
# simulated providers (no credentials needed); `make run` against the real providers.
#
#   make                      build, start ib-sim, run every stage on a small selection
#   make run                  the same against the providers in providers.yaml (.env)
#   make rescore RUN=<dir>    reconstruct → report again from the raw log, no network
#   make test                 every test
#   make bench                benchmarks
#   make data / data-sample   regenerate the synthetic dataset / its 6-per-family sample
#
# Settings (override on the command line): WORKFLOW, SPEC, DATASET, PER_FAMILY, SAMPLE, RUN.
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

WORKFLOW     ?= micro-single-task
PIPELINE     := pipelines/$(WORKFLOW)
SPEC         ?= $(PIPELINE)/spec.yaml
PROVIDERS    := $(PIPELINE)/providers.yaml
SIM_PROFILES ?= $(PIPELINE)/sim-profiles.yaml
# The generated 721-item dataset (data/README.md); `make` selects a few items per family
# from it, the reference benchmark 200 (PER_FAMILY=200). A private release works the same way
# (DATASET=<dir>); a small one needs SAMPLE=--sample.
DATASET      ?= data/$(WORKFLOW)
SAMPLE       ?=
PER_FAMILY   ?= 6
DATA_SEED    ?= 20261129
BIN          := target/release
CARGO        ?= cargo

# `make` keeps one simulated run and brings it up to date; `make run` starts a new run.
SIM_RUN      ?= runs/$(WORKFLOW)/simulated
RUN          ?= runs/$(WORKFLOW)/run-$(shell date -u +%Y%m%d-%H%M%S)

DATA_FILES   := $(wildcard $(DATASET)/*.json $(DATASET)/*.jsonl) $(wildcard $(PIPELINE)/prompts/*)

.PHONY: all run rescore test bench bins clean-sim data data-sample

all: bins
	@$(MAKE) --no-print-directory $(SIM_RUN)/report.md RUN=$(SIM_RUN) ENDPOINTS=simulated
	@echo "report: $(SIM_RUN)/report.md"

run: bins
	@$(MAKE) --no-print-directory $(RUN)/report.md RUN=$(RUN) ENDPOINTS=providers
	@echo "report: $(RUN)/report.md"

bins:
	$(CARGO) build --release --locked --bins

# The end-to-end test opens every Parquet output with Python polars, as a notebook would,
# and runs the pipeline against real llama.cpp servers installed into $(LLAMA_VENV).
LLAMA_VENV := target/llama-venv
test:
	@python3 -c 'import polars' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check polars
	@$(LLAMA_VENV)/bin/python -c 'import xllamacpp' 2>/dev/null || tests/llama/install.sh $(LLAMA_VENV)
	IB_LLAMA_PYTHON=$(CURDIR)/$(LLAMA_VENV)/bin/python $(CARGO) test --workspace --locked

bench: bins
	$(CARGO) bench --locked --bench pipeline

clean-sim:
	rm -rf $(SIM_RUN)

# The same seed always writes byte-identical files; data/README.md records their SHA-256.
data: bins
	$(BIN)/ib-data generate --seed $(DATA_SEED) --out data/$(WORKFLOW)

data-sample: bins
	$(BIN)/ib-data generate --seed $(DATA_SEED) --sample 6 --out data/$(WORKFLOW)-sample

ENDPOINTS ?= simulated

$(RUN)/lock.json: $(SPEC) $(PROVIDERS) $(DATA_FILES)
	$(BIN)/ib-select --run $(RUN) --spec $(SPEC) --dataset $(DATASET) --per-family $(PER_FAMILY) $(SAMPLE)

$(RUN)/schedule.parquet: $(RUN)/lock.json
	$(BIN)/ib-schedule --run $(RUN) --spec $(SPEC)

# Order-only on the binaries: a rebuilt fetch never re-hits an endpoint by itself.
$(RUN)/events.parquet: $(RUN)/schedule.parquet
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

$(RUN)/responses.parquet: $(RUN)/events.parquet
	$(BIN)/ib-reconstruct --run $(RUN)

$(RUN)/evaluations.parquet: $(RUN)/responses.parquet
	$(BIN)/ib-evaluate --run $(RUN) --spec $(SPEC) --dataset $(DATASET)

$(RUN)/metrics.json: $(RUN)/responses.parquet $(RUN)/evaluations.parquet $(RUN)/schedule.parquet
	$(BIN)/ib-aggregate --run $(RUN) --spec $(SPEC)

$(RUN)/report.md: $(RUN)/metrics.json
	$(BIN)/ib-report --run $(RUN) --spec $(SPEC)

# Re-score an archived run offline: every derived file again from the raw event log.
rescore: bins
	@test -d "$(RUN)/events" || { echo "rescore: RUN=<run directory with events/> is required" >&2; exit 2; }
	$(BIN)/ib-reconstruct --run $(RUN)
	$(BIN)/ib-evaluate --run $(RUN) --spec $(SPEC) --dataset $(DATASET)
	$(BIN)/ib-aggregate --run $(RUN) --spec $(SPEC)
	$(BIN)/ib-report --run $(RUN) --spec $(SPEC)
	@echo "report: $(RUN)/report.md"
