"""Writes analyses.ipynb from analyses.py, cell for cell (`# %%` starts a code cell,
`# %% [markdown]` a markdown cell whose lines drop their leading `# `). With --check it writes
nothing and fails when analyses.ipynb is not what analyses.py gives (tests/e2e/notebooks.rs)."""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def cells(source: str) -> list:
    out, kind, lines = [], None, []

    def flush():
        if kind is None:
            return
        while lines and not lines[-1].strip():
            lines.pop()
        text = [line + "\n" for line in lines]
        if text:
            text[-1] = text[-1].rstrip("\n")
        cell = {"cell_type": kind, "metadata": {}, "source": text}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        out.append(cell)

    for line in source.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind == "markdown":
            lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        elif kind == "code":
            lines.append(line)
    flush()
    return out


def notebook() -> str:
    book = {
        "cells": cells((HERE / "analyses.py").read_text()),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(book, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    target = HERE / "analyses.ipynb"
    if "--check" in sys.argv[1:]:
        if not target.exists() or target.read_text() != notebook():
            sys.exit("notebooks/analyses.ipynb differs from analyses.py: run python3 notebooks/to_ipynb.py")
    else:
        target.write_text(notebook())
