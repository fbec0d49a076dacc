"""Mutation testing of the modules that decide a score, an answer, a limit, a secret, a trajectory or training data.

Run: ``.venv/bin/python benchmarks/perf/mutation.py [--module NAME ...] [--max-mutants N] [--timeout S]
[--keep]``. Too long for every CI run (minutes per module on 2 cores): run it when you change one of the
modules of ``mutation_targets.MODULES`` (``--module NAME`` for that one) and keep its score at or above the floor in
CONTRIBUTING.md.

The tool is cosmic-ray (``dev`` extra, pinned). The working tree is never mutated: the tracked and untracked,
non-ignored files (``git ls-files -co --exclude-standard``) are copied to a temporary folder, and a mirror of the
installed package layout (``build/pkg/spatialclaw``, symbolic links into the copy, as ``scripts/typecheck.py``
does) is put first on ``PYTHONPATH``, ahead of the editable install's finder. Each module's mutants are limited
to the functions named in ``MODULES`` (the ones whose behaviour decides the outcome), annotations left out, and each mutant is run
against the fast tests that cover them, listed there too (``pytest -x``; a timeout counts as killed, and the limit
is at least three times the unmutated run's time, so that a loaded machine does not kill survivors). The
unmutated tests must pass first, else that module is reported as ``baseline failed``. ``--max-mutants N`` keeps
N mutants spread evenly over the module, for a quick run.

Prints per module the mutants killed / total, the score, how many survivors are argued (``mutation_targets.ARGUED``: equivalent,
or not killable without a fake clock or a power cut; argued in CONTRIBUTING.md), how many are unexplained and how
many of the killed hit the time limit (``timeouts``), then
every survivor (line, operator, diff, argued or not), and one JSON line: ``{"modules": {name: {"killed",
"timeouts", "survived", "argued", "unexplained", "total", "score", "survivors": [{"line", "operator", "diff", "argued"}]}},
"total_score"}`` (``argued``: the reason, or null).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from spatialclaw.benchmarks.perf.mutation_targets import KERNEL_TESTS, MODULES, argued

ROOT = Path(__file__).resolve().parents[2]
#: Source folder -> where it sits inside the ``spatialclaw`` package (as in ``pyproject.toml``).
MAPPED = {"primitives": "primitives", "prompts": "prompts", "benchmarks": "benchmarks"}
FAST = "-x -q -p no:cacheprovider -p no:randomly --timeout=120"


def copy_tree(destination: Path) -> None:
    """Copy the tracked and untracked, non-ignored files of the working tree into ``destination``."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def build_mirror(copy: Path) -> Path:
    """``COPY/build/pkg/spatialclaw``: links to every entry of the copy's ``spatialclaw/`` and the mapped folders."""
    package = copy / "build" / "pkg" / "spatialclaw"
    package.mkdir(parents=True)
    for entry in list((copy / "spatialclaw").iterdir()):
        (package / entry.name).symlink_to(entry)
    for folder, name in MAPPED.items():
        (package / name).symlink_to(copy / folder)
        # the copy's own spatialclaw/ gets the links too: pytest puts the copy's root first on sys.path, and a
        # subpackage missing there would come from the editable install, i.e. from the unmutated working tree
        (copy / "spatialclaw" / name).symlink_to(copy / folder)
    return package.parent


def function_lines(source: str, names: list[str]) -> set[int]:
    """Line numbers (1-based) inside the named top-level functions, classes or ``Class.method``s."""
    lines: set[int] = set()
    found: set[str] = set()
    for node in ast.parse(source).body:
        candidates: list[tuple[str, ast.AST]] = [(getattr(node, "name", ""), node)]
        if isinstance(node, ast.ClassDef):
            candidates += [(f"{node.name}.{item.name}", item) for item in node.body if hasattr(item, "name")]
        for name, item in candidates:
            if name in names:
                found.add(name)
                lines.update(range(item.lineno, (item.end_lineno or item.lineno) + 1))  # type: ignore[attr-defined]
    missing = set(names) - found
    if missing:
        raise SystemExit(f"no such function(s): {sorted(missing)}")
    return lines


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) (line, column) of every annotation: with ``from __future__ import annotations`` they are
    never evaluated, so a mutant inside one (``str | None`` -> ``str % None``) is equivalent by construction."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        found: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            found.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        for item in found:
            if item is not None and item.end_lineno is not None and item.end_col_offset is not None:
                spans.append(((item.lineno, item.col_offset), (item.end_lineno, item.end_col_offset)))
    return spans


def run_module(
    name: str, spec: dict[str, Any], copy: Path, env: dict[str, str], args: argparse.Namespace
) -> dict[str, Any]:
    """Init, filter and run one cosmic-ray session; the counts and the survivors."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    present = [test for test in spec["tests"] if (copy / test).is_file()]
    for test in sorted(set(spec["tests"]) - set(present)):
        print(f"{name}: test file {test} is missing, left out", file=sys.stderr)
    if args.existing_only:  # what the suite caught before the specification files were written
        present = [test for test in present if not Path(test).name.startswith("test_specs_")]
    if not present:  # pytest without files would run the whole suite
        return {"no_tests": True, "killed": 0, "survived": 0, "total": 0, "score": 0.0, "survivors": []}
    left_out = [f"--deselect {test}::{name}" for test in present for name in KERNEL_TESTS.get(test, [])]
    tests = " ".join(present + left_out)
    command = f"{sys.executable} -m pytest {FAST} {tests}"
    started = time.monotonic()
    if subprocess.run(command.split(), cwd=copy, env=env, capture_output=True).returncode != 0:
        return {"baseline_failed": True, "killed": 0, "survived": 0, "total": 0, "score": 0.0, "survivors": []}
    # a mutant's time limit: a loaded machine slows every run, and a survivor stopped by a fixed limit read as killed
    timeout = max(args.timeout, 3.0 * (time.monotonic() - started))
    config = copy / f"mutation-{name}.toml"
    config.write_text(
        f'[cosmic-ray]\nmodule-path = "{spec["path"]}"\ntimeout = {timeout:.0f}\nexcluded-modules = []\n'
        f'test-command = "{command}"\n\n[cosmic-ray.distributor]\nname = "local"\n'
    )
    session = copy / f"mutation-{name}.sqlite"
    cosmic_ray = [str(Path(sys.executable).parent / "cosmic-ray")]
    subprocess.run([*cosmic_ray, "init", str(config), str(session)], cwd=copy, env=env, check=True)
    wanted = function_lines((copy / spec["path"]).read_text(), spec["functions"])
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = [item for item in db.pending_work_items]
        spans = annotation_spans((copy / spec["path"]).read_text())
        inside = [
            item
            for item in items
            if item.mutations[0].start_pos[0] in wanted
            and not any(start <= tuple(item.mutations[0].start_pos) < end for start, end in spans)
        ]
        # the work DB's order is not stable between sessions: sort, so that a sample is the same mutants each run
        inside.sort(
            key=lambda item: (
                tuple(item.mutations[0].start_pos),
                item.mutations[0].operator_name,
                item.mutations[0].occurrence,
            )
        )
        if args.max_mutants and len(inside) > args.max_mutants:
            step = len(inside) / args.max_mutants
            inside = [inside[int(i * step)] for i in range(args.max_mutants)]
        keep = {item.job_id for item in inside}
        skipped = [item.job_id for item in items if item.job_id not in keep]
        db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
    print(f"{name}: {len(keep)} mutants of {len(items)} in {spec['path']}", file=sys.stderr, flush=True)
    subprocess.run([*cosmic_ray, "exec", str(config), str(session)], cwd=copy, env=env, check=True)
    killed = survived = timeouts = 0
    survivors = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if item.job_id not in keep:
                continue
            mutation = item.mutations[0]
            if result.test_outcome == TestOutcome.SURVIVED:
                survived += 1
                lines = (result.diff or "").splitlines()
                diff = "\n".join(line for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---"))
                reason = argued(name, diff)
                survivors.append(
                    {"line": mutation.start_pos[0], "operator": mutation.operator_name, "diff": diff, "argued": reason}
                )
            else:
                killed += 1
                timeouts += result.output == "timeout"
    total = killed + survived
    score = killed / total if total else 1.0
    count = sum(1 for survivor in survivors if survivor["argued"])
    return {
        "killed": killed,
        "timeouts": timeouts,
        "survived": survived,
        "argued": count,
        "unexplained": survived - count,
        "total": total,
        "score": round(score, 4),
        "survivors": survivors,
    }


def in_copy(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one module's mutants in a fresh copy of the working tree (removed after, unless ``--keep``)."""
    copy = Path(tempfile.mkdtemp(prefix=f"spatialclaw-mutation-{name}-"))
    try:
        copy_tree(copy)
        mirror = build_mirror(copy)
        env = dict(os.environ, PYTHONPATH=f"{mirror}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutant of the same size within a second must not reuse a .pyc
        env.setdefault("HF_HUB_OFFLINE", "1")
        # the copy sits in a temporary folder: the real data beside the checkout, not beside the copy
        env.setdefault("SPATIALCLAW_TEST_DATA", str(ROOT.parent / "shared" / "data"))
        path = MODULES[name]["path"]
        dotted = path.removesuffix(".py").replace("/", ".")
        dotted = dotted if dotted.startswith("spatialclaw.") else f"spatialclaw.{dotted}"
        where = f"import {dotted} as m, pathlib; print(pathlib.Path(m.__file__).resolve())"
        loaded = subprocess.run([sys.executable, "-c", where], cwd=copy, env=env, capture_output=True, text=True)
        if loaded.stdout.strip() != str((copy / path).resolve()):
            raise SystemExit(f"{dotted} is not imported from the copy: {loaded.stdout.strip()} {loaded.stderr[-500:]}")
        return run_module(name, MODULES[name], copy, env, args)
    finally:
        if args.keep:
            print(f"copy kept at {copy}", file=sys.stderr)
        else:
            shutil.rmtree(copy, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--module", action="append", choices=sorted(MODULES), help="only these modules (repeatable)")
    parser.add_argument("--max-mutants", type=int, default=0, help="at most N mutants per module (0: all)")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per mutant's test run, at least (3x the unmutated run)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="modules run at once, each in its own copy")
    parser.add_argument("--existing-only", action="store_true", help="leave out tests/specs/")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    args = parser.parse_args(argv)
    names = args.module or list(MODULES)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(names, pool.map(lambda name: in_copy(name, args), names), strict=True))
    print(f"{'module':<18} {'killed':>7} {'total':>6} {'score':>7} {'argued':>7} {'unexplained':>12} {'timeouts':>9}")
    for name, result in results.items():
        note = "  baseline failed" if result.get("baseline_failed") else "  no tests" if result.get("no_tests") else ""
        counts = f"{result['killed']:>7} {result['total']:>6} {result['score']:>7.1%}"
        explained = f"{result.get('argued', 0):>7} {result.get('unexplained', 0):>12} {result.get('timeouts', 0):>9}"
        print(f"{name:<18} {counts} {explained}{note}")
    for name, result in results.items():
        for survivor in result["survivors"]:
            why = f"  (argued: {survivor['argued']})" if survivor["argued"] else "  (unexplained)"
            print(f"\nSURVIVED {name} {MODULES[name]['path']}:{survivor['line']} {survivor['operator']}{why}")
            print(survivor["diff"])
    killed = sum(result["killed"] for result in results.values())
    total = sum(result["total"] for result in results.values())
    print(json.dumps({"modules": results, "total_score": round(killed / total, 4) if total else 1.0}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
