"""Opens every Parquet file of a run with polars and checks its columns against the JSON
Schema committed in schemas/json/ (the documented columns), in order."""
import json
import pathlib
import sys

import polars as pl

SCHEMAS = pathlib.Path(__file__).resolve().parent.parent / "schemas" / "json"
TABLES = {
    "selection.parquet": "selection.schema.json",
    "schedule.parquet": "schedule.schema.json",
    "events.parquet": "events-table.schema.json",
    "responses.parquet": "responses.schema.json",
    "evaluations.parquet": "evaluations.schema.json",
    "metrics.parquet": "metrics.schema.json",
}


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
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
