"""Opens every Parquet file of a run with polars and checks its columns against the JSON
Schema committed in crates/contract/json/ (the documented columns), in order; then queries them as a
notebook would: responses joined with evaluations on request_id (no column but the key in
common), a contract field filtered without a JSON function, pooled.parquet's eligibility."""
import json
import pathlib
import sys

import polars as pl

SCHEMAS = pathlib.Path(__file__).resolve().parent.parent / "crates" / "contract" / "json"
TABLES = {
    "selection.parquet": "selection.schema.json",
    "schedule.parquet": "schedule.schema.json",
    "events.parquet": "events-table.schema.json",
    "responses.parquet": "responses.schema.json",
    "evaluations.parquet": "evaluations.schema.json",
    "metrics.parquet": "metrics.schema.json",
    "pooled.parquet": "pooled.schema.json",
}


def check_queries(run: pathlib.Path) -> list:
    problems = []
    responses = pl.read_parquet(run / "responses.parquet")
    evaluations = pl.read_parquet(run / "evaluations.parquet")
    shared = sorted(set(responses.columns) & set(evaluations.columns))
    if shared != ["request_id"]:
        problems.append(f"responses and evaluations share {shared}, not just request_id")
    joined = responses.join(evaluations, on="request_id", how="inner", validate="1:1")
    if len(set(joined.columns)) != joined.width or any(c.endswith("_right") for c in joined.columns):
        problems.append(f"the join has duplicated columns: {joined.columns}")
    if joined.height != responses.height:
        problems.append(f"{joined.height} of {responses.height} responses have an evaluation")
    # A typed field of the answer, with no JSON function: every schema-valid ticket-triage
    # answer has its category, and it is one of the contract's.
    triage = joined.filter((pl.col("task_family") == "ticket-triage") & pl.col("schema_valid"))
    category = triage.select(pl.col("parsed_output").struct.field("ticket_triage").struct.field("category"))
    if category.to_series().null_count() != 0:
        problems.append("a schema-valid ticket-triage answer without parsed_output.ticket_triage.category")
    pooled = pl.read_parquet(run / "pooled.parquet")
    if pooled["eligible"].null_count() != 0 or pooled.schema["eligible"] != pl.Boolean:
        problems.append(f"pooled.parquet: eligible is not a non-null boolean: {pooled['eligible']}")
    if pooled.schema["ineligibility_reasons"] != pl.List(pl.String):
        problems.append(f"pooled.parquet: ineligibility_reasons is {pooled.schema['ineligibility_reasons']}")
    ranked = pooled.filter(pl.col("rank").is_not_null())
    if not ranked["eligible"].all() or ranked.filter(pl.col("ineligibility_reasons").list.len() > 0).height:
        problems.append("pooled.parquet: a ranked provider is ineligible")
    unranked = pooled.filter(~pl.col("eligible"))
    if unranked.filter(pl.col("ineligibility_reasons").list.len() == 0).height:
        problems.append("pooled.parquet: an ineligible provider without a reason")
    metrics = pl.read_parquet(run / "metrics.parquet")
    if metrics.filter(pl.col("task_family") == "pooled").height:
        problems.append("metrics.parquet holds pooled rows")
    if sorted(metrics["provider"].unique()) != sorted(pooled["provider"]):
        problems.append("metrics.parquet and pooled.parquet name different providers")
    for table in ["evaluations.parquet", "metrics.parquet", "pooled.parquet"]:
        meta = pl.read_parquet_metadata(run / table)
        if meta.get("inferbench.table") != table.removesuffix(".parquet"):
            problems.append(f"{table}: metadata inferbench.table is {meta.get('inferbench.table')}")
        if "responses.parquet" not in json.loads(meta.get("inferbench.inputs", "{}")):
            problems.append(f"{table}: inferbench.inputs does not name responses.parquet")
    return problems


def main(run: pathlib.Path) -> int:
    problems = []
    for table, schema_file in TABLES.items():
        documented = list(json.loads((SCHEMAS / schema_file).read_text())["properties"])
        frame = pl.read_parquet(run / table)
        if frame.columns != documented:
            problems.append(f"{table}: columns {frame.columns} != documented {documented}")
        elif frame.height == 0:
            problems.append(f"{table}: no rows")
        else:
            print(f"{table}: {frame.height} rows, {frame.width} columns")
    if not problems:
        problems = check_queries(run)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
