# ---
# jupyter: {kernelspec: {name: python3, display_name: Python 3}}
# ---
# %% [markdown]
# # The typical analyses of inferbench runs
#
# `runs/` is a Hive-partitioned Parquet dataset (`runs/workflow=<w>/run=<name>/<table>.parquet`):
# polars, DuckDB and pandas read it as it lies, with `workflow` and `run` as columns. Each
# analysis below is done with polars and with DuckDB (and one with pandas) and the answers are
# checked against each other and against the run's own `metrics.parquet`, so this script
# doubles as a test (`tests/e2e/notebooks.rs` runs it on the e2e run). No JSON is parsed: the
# tables' columns are typed.
#
# Run it as a script (`python3 notebooks/analyses.py [ROOT]`, ROOT default `runs`), or open it
# as a notebook: the `# %%` markers are cells (VS Code, Jupyter with jupytext); `analyses.ipynb`
# beside it holds the same cells.
#
# Percentiles are nearest-rank, inferbench's convention (DESIGN.md): the sample at rank
# ceil(q·n) of the ascending samples, so the figures match `metrics.parquet`.

# %%
import math
import pathlib
import sys

import duckdb
import polars as pl

# The runs' root: the script's argument; in a notebook (whose argv is the kernel's), `runs`
# of the repository, whether the notebook runs from the root or from notebooks/.
if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    ROOT = sys.argv[1]
else:
    ROOT = "runs" if pathlib.Path("runs").is_dir() else "../runs"


def table(name: str) -> str:
    """The glob of one table over every run under ROOT."""
    return f"{ROOT}/*/*/{name}.parquet"


def scan(name: str) -> pl.LazyFrame:
    return pl.scan_parquet(table(name), hive_partitioning=True)


def duck(sql: str) -> pl.DataFrame:
    """A DuckDB query, `{name}` standing for `read_parquet(<name's glob>, hive_partitioning = true)`."""
    for name in ["responses", "evaluations", "events", "metrics", "pooled"]:
        sql = sql.replace("{" + name + "}", f"read_parquet('{table(name)}', hive_partitioning = true)")
    relation = duckdb.sql(sql)
    # Row by row into polars: DuckDB's own .pl() would need pyarrow on top.
    return pl.DataFrame(relation.fetchall(), schema=relation.columns, orient="row")


def nearest_rank(column: str, q: float) -> pl.Expr:
    """Nearest-rank q-quantile of the column's non-null values (rank ceil(q·n))."""
    values = pl.col(column).drop_nulls().sort()
    return values.get((values.len() * q).ceil().cast(pl.Int64) - 1)


def duck_nearest_rank(column: str, q: float) -> str:
    return f"list_sort(list({column}) FILTER (WHERE {column} IS NOT NULL))[CAST(ceil(count({column}) * {q}) AS BIGINT)]"


def same(a: pl.DataFrame, b: pl.DataFrame, what: str) -> None:
    """Two answers to one question agree (same rows, numbers to 1e-9)."""
    assert a.columns == b.columns, f"{what}: columns {a.columns} != {b.columns}"
    assert a.height == b.height, f"{what}: {a.height} rows != {b.height}"
    for column in a.columns:
        for x, y in zip(a[column].to_list(), b[column].to_list()):
            if isinstance(x, float) or isinstance(y, float):
                assert x is not None and y is not None and math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9), (what, column, x, y)
            else:
                assert x == y, (what, column, x, y)


KEYS = ["workflow", "run", "provider"]
pl.Config.set_tbl_cols(12)
pl.Config.set_tbl_width_chars(170)
pl.Config.set_tbl_rows(40)

# %% [markdown]
# ## 1. TTFA distribution per provider
# Time to first visible answer token (`responses.ttfa_ms`), every response that has one.

# %%
ttfa = (
    scan("responses")
    .filter(pl.col("ttfa_ms").is_not_null())
    .group_by(KEYS)
    .agg(
        n=pl.len().cast(pl.Int64),
        min=pl.col("ttfa_ms").min(),
        p10=nearest_rank("ttfa_ms", 0.10),
        p50=nearest_rank("ttfa_ms", 0.50),
        p90=nearest_rank("ttfa_ms", 0.90),
        p99=nearest_rank("ttfa_ms", 0.99),
        max=pl.col("ttfa_ms").max(),
    )
    .sort(KEYS)
    .collect()
)
ttfa_duck = duck(
    f"""SELECT workflow, run, provider, count(*) AS n, min(ttfa_ms) AS min,
           {duck_nearest_rank('ttfa_ms', 0.10)} AS p10, {duck_nearest_rank('ttfa_ms', 0.50)} AS p50,
           {duck_nearest_rank('ttfa_ms', 0.90)} AS p90, {duck_nearest_rank('ttfa_ms', 0.99)} AS p99,
           max(ttfa_ms) AS max
    FROM {{responses}} WHERE ttfa_ms IS NOT NULL GROUP BY ALL ORDER BY ALL"""
)
same(ttfa, ttfa_duck, "TTFA distribution")
print("TTFA per provider (ms):")
print(ttfa)

# %% [markdown]
# The same distribution in pandas (DuckDB hands pandas the frame; pandas' own quantiles
# interpolate, so only the counts and extremes are compared).

# %%
try:
    import pandas as pd
except ImportError:  # pandas is optional for the notebook, not for CI (make test installs it)
    pd = None
if pd is not None:
    frame = duckdb.sql(f"SELECT workflow, run, provider, ttfa_ms FROM read_parquet('{table('responses')}', hive_partitioning = true) WHERE ttfa_ms IS NOT NULL").df()
    described = frame.groupby(KEYS)["ttfa_ms"].agg(["count", "min", "median", "max"]).reset_index().sort_values(KEYS)
    assert described["count"].tolist() == ttfa["n"].to_list(), "pandas counts"
    assert described["min"].tolist() == ttfa["min"].to_list() and described["max"].tolist() == ttfa["max"].to_list()
    print(described.to_string(index=False))

# %% [markdown]
# ## 2. Inter-token gaps, from the events
# `events.parquet` has one row per logged event, typed: an answer token's event is an
# `sse_event` row with a non-null `answer_delta`, and `offset_ms` is its time since its request
# was sent. The gaps are the differences between consecutive answer events of one attempt.

# %%
gaps = (
    scan("events")
    .filter((pl.col("type") == "sse_event") & pl.col("answer_delta").is_not_null())
    .sort("seq")
    .with_columns(gap_ms=pl.col("offset_ms").diff().over(["workflow", "run", "request_id", "attempt"]))
    .filter(pl.col("gap_ms").is_not_null())
    .group_by(KEYS)
    .agg(
        gaps=pl.len().cast(pl.Int64),
        p50=nearest_rank("gap_ms", 0.50),
        p90=nearest_rank("gap_ms", 0.90),
        p99=nearest_rank("gap_ms", 0.99),
        max=pl.col("gap_ms").max(),
    )
    .sort(KEYS)
    .collect()
)
gaps_duck = duck(
    f"""WITH answer AS (
        SELECT workflow, run, provider,
               offset_ms - lag(offset_ms) OVER (PARTITION BY workflow, run, request_id, attempt ORDER BY seq) AS gap_ms
        FROM {{events}} WHERE type = 'sse_event' AND answer_delta IS NOT NULL)
    SELECT workflow, run, provider, count(gap_ms) AS gaps, {duck_nearest_rank('gap_ms', 0.50)} AS p50,
           {duck_nearest_rank('gap_ms', 0.90)} AS p90, {duck_nearest_rank('gap_ms', 0.99)} AS p99, max(gap_ms) AS max
    FROM answer WHERE gap_ms IS NOT NULL GROUP BY ALL ORDER BY ALL"""
)
same(gaps, gaps_duck, "inter-token gaps")
assert gaps.height > 0, "some provider streamed more than one answer event"
print("Inter-token gaps per provider (ms):")
print(gaps)

# %% [markdown]
# ## 3. Task success by family
# `responses` and `evaluations` join on `request_id` (they share no other column). A valid
# result is `classification = 'valid_result'`; the rate is over the provider's responses of
# the family, `metrics.parquet`'s `task_success_rate`.

# %%
success = (
    scan("responses")
    .select("workflow", "run", "request_id", "provider", pl.col("task_family").cast(pl.String))
    .join(scan("evaluations").select("workflow", "run", "request_id", "classification"), on=["workflow", "run", "request_id"])
    .group_by([*KEYS, "task_family"])
    .agg(
        responses=pl.len().cast(pl.Int64),
        valid=(pl.col("classification").cast(pl.String) == "valid_result").sum().cast(pl.Int64),
    )
    .with_columns(task_success_rate=pl.col("valid") / pl.col("responses"))
    .sort([*KEYS, "task_family"])
    .collect()
)
success_duck = duck(
    """SELECT r.workflow, r.run, r.provider, CAST(r.task_family AS VARCHAR) AS task_family, count(*) AS responses,
           CAST(count(*) FILTER (WHERE CAST(e.classification AS VARCHAR) = 'valid_result') AS BIGINT) AS valid,
           valid / responses AS task_success_rate
    FROM {responses} r JOIN {evaluations} e USING (workflow, run, request_id)
    GROUP BY ALL ORDER BY ALL"""
)
same(success, success_duck, "success by family")
# The run's own metrics say the same.
metrics = (
    scan("metrics")
    .select(*KEYS, pl.col("task_family").cast(pl.String), "submitted_count", "task_success_rate")
    # Runs scored before pooled.parquet existed also hold `pooled` rows here.
    .filter((pl.col("submitted_count") > 0) & (pl.col("task_family") != "pooled"))
    .sort([*KEYS, "task_family"])
    .collect()
)
joined = success.join(metrics, on=[*KEYS, "task_family"], how="full", coalesce=True)
assert joined.height == success.height == metrics.height, "a family in one and not the other"
same(joined.select("responses"), joined.select(pl.col("submitted_count").alias("responses")), "submitted")
same(joined.select("task_success_rate"), joined.select(pl.col("task_success_rate_right").alias("task_success_rate")), "rates")
print("Task success by provider and family:")
print(success)

# %% [markdown]
# ## 4. Failures by class over time
# Each failed request's operational class (`responses.operational_outcome`, `2xx` being
# success) by the minute it was sent (`responses.started_at`, UTC wall clock).

# %%
failures = (
    scan("responses")
    .filter(pl.col("operational_outcome").cast(pl.String) != "2xx")
    .group_by("workflow", "run", pl.col("started_at").dt.truncate("1m").alias("minute"), pl.col("operational_outcome").cast(pl.String))
    .agg(failures=pl.len().cast(pl.Int64), providers=pl.col("provider").n_unique().cast(pl.Int64))
    .sort("workflow", "run", "minute", "operational_outcome")
    .collect()
)
failures_duck = duck(
    """SELECT workflow, run, date_trunc('minute', started_at) AS minute, CAST(operational_outcome AS VARCHAR) AS operational_outcome,
           count(*) AS failures, count(DISTINCT provider) AS providers
    FROM {responses} WHERE CAST(operational_outcome AS VARCHAR) <> '2xx' GROUP BY ALL ORDER BY ALL"""
)
same(failures.with_columns(pl.col("minute").cast(pl.Datetime("us"))), failures_duck.with_columns(pl.col("minute").cast(pl.Datetime("us"))), "failures over time")
failed_total = scan("responses").filter(pl.col("operational_outcome").cast(pl.String) != "2xx").select(pl.len()).collect().item()
assert failures["failures"].sum() == failed_total
print("Failures by class over time:")
print(failures)

# %%
engines = "polars, DuckDB and pandas" if pd is not None else "polars and DuckDB (pandas is not installed)"
print(f"analyses: {ttfa.height} provider TTFA distributions, {gaps.height} gap distributions, "
      f"{success.height} provider × family rates, {failures.height} failure buckets; {engines} agree")
