"""The tree keeps the layout rules of docs/design.md: no import cycles, one job per module stated in its
docstring's first line (never a batch or part name), kernel-side code that never imports the host side, and no
leftover flat modules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Source folder -> the package it is installed as (pyproject.toml's package-dir).
SOURCES = {
    "spatialclaw": "spatialclaw",
    "primitives": "spatialclaw.primitives",
    "prompts": "spatialclaw.prompts",
    "benchmarks": "spatialclaw.benchmarks",
}
#: An alarm, not a target: past this a module has likely grown a second job. Split by job, never by count.
ALARM_LINES = 600
#: Name parts that say when or in which batch a module was written, not what it does.
BATCH_NAME = re.compile(r"(^|_)(p\d+|part\d*|batch\d*|more|misc|extra|new|old)(_|$)")


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for folder, package in SOURCES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every project module ``name`` imports, at any depth of the file (inside functions too)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" for alias in node.names] + [module]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name and MODULES[target].name != "__init__.py":
                found.add(target)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(GRAPH[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_even_through_imports_inside_functions():
    assert _cycles() == []


def test_the_cycle_finder_finds_a_cycle():
    GRAPH["spatialclaw.task"].add("spatialclaw.chat")
    GRAPH["spatialclaw.chat"].add("spatialclaw.task")
    try:
        assert ["spatialclaw.chat", "spatialclaw.task"] in _cycles()
    finally:
        GRAPH["spatialclaw.task"] = _imports("spatialclaw.task", MODULES["spatialclaw.task"])
        GRAPH["spatialclaw.chat"] = _imports("spatialclaw.chat", MODULES["spatialclaw.chat"])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_states_its_one_job_and_stays_under_the_alarm(name):
    path = MODULES[name]
    text = path.read_text()
    docstring = ast.get_docstring(ast.parse(text))
    assert docstring and docstring.strip(), f"{path.relative_to(ROOT)} has no module docstring saying its job"
    assert not BATCH_NAME.search(path.stem), f"{path.relative_to(ROOT)} is named by a batch, not by its job"
    assert text.count("\n") <= ALARM_LINES, (
        f"{path.relative_to(ROOT)} has {text.count(chr(10))} lines: does it still do one job? split it by job"
    )


def test_the_batch_name_rule_catches_batch_names():
    assert all(BATCH_NAME.search(n) for n in ("official_paper_p2", "paper_read_p3", "official_paper_p2_more", "more"))
    assert not any(BATCH_NAME.search(n) for n in ("spar_bench", "published", "letters", "video_mme_v2", "numbers"))


def test_benchmarks_top_level_holds_only_the_registry_and_its_kin():
    """Per-benchmark rules live in specs/, shared rules in scoring/, data access in data/, the dev set in devset/."""
    top = {path.stem for path in (ROOT / "benchmarks").glob("*.py")} - {"__init__"}
    assert len(top) <= 12, sorted(top)
    assert not {name for name in top if name.startswith(("devset", "official", "aggregation", "paper_read"))}


def test_kernel_side_never_imports_the_host_side():
    host = {
        name
        for name in MODULES
        if name.startswith("spatialclaw.") and not name.startswith(("spatialclaw.primitives", "spatialclaw.prompts"))
    } | {"spatialclaw"}
    wrong = {name: sorted(GRAPH[name] & host) for name in MODULES if name.startswith("spatialclaw.primitives")}
    assert {name: found for name, found in wrong.items() if found} == {}


def test_no_flat_modules_left_where_a_layer_now_lives():
    flat = {path.stem for path in (ROOT / "spatialclaw").glob("*.py")}
    assert flat <= {"__init__", "cli", "task", "chat", "extras", "input_paths", "jsonl"}
    assert {path.stem for path in (ROOT / "primitives").glob("*.py")} <= {"__init__", "imaging", "protocol", "answers"}


def test_no_docstring_contradicts_the_one_sign_convention() -> None:
    """pitch > 0 tilts UP in every tool (primitives/runtime/conventions.py); a manual that says otherwise
    made a model pass the wrong sign (floor points 30 m away)."""
    import re

    stale = re.compile(r"pitch\W{0,4}\s*>\s*0\s+(is|means|looks)\s+down", re.IGNORECASE)
    offenders = [
        f"{path}:{number}"
        for folder in ("primitives", "spatialclaw")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if stale.search(line)
    ]
    assert not offenders, offenders


#: Test folders that mirror no package folder: what they test cuts across the package.
CROSS_CUTTING_TEST_FOLDERS = {"security", "docs", "specs"}
#: Past this many test files the top of tests/ is a heap again: put new tests in the folder of what they test.
TOP_LEVEL_TEST_FILES = 25


def _package_folders() -> set[str]:
    """Every folder of the package as a path relative to it (``agent``, ``primitives/perception``, ...)."""
    folders = set()
    for folder, package in SOURCES.items():
        prefix = package.split(".")[1:]
        for path in (ROOT / folder).rglob("__init__.py"):
            folders.add("/".join([*prefix, *path.parent.relative_to(ROOT / folder).parts]))
    return folders - {""}


def _test_tree_offences(tests: Path, package_folders: set[str]) -> list[str]:
    """What breaks the test tree's layout: a ``test_*.py`` in a folder that is neither a package folder nor a
    cross-cutting one, or more than :data:`TOP_LEVEL_TEST_FILES` test files at the top."""
    offences = []
    top = sorted(path.name for path in tests.glob("test_*.py"))
    if len(top) > TOP_LEVEL_TEST_FILES:
        offences.append(f"{len(top)} test files at the top of tests/ (at most {TOP_LEVEL_TEST_FILES}): {top}")
    for path in sorted(tests.rglob("test_*.py")):
        folder = path.parent.relative_to(tests)
        if (
            folder.parts
            and folder.parts[0] not in CROSS_CUTTING_TEST_FOLDERS
            and folder.as_posix() not in package_folders
        ):
            offences.append(f"{path.relative_to(tests.parent)}: tests/{folder.as_posix()} mirrors no package folder")
    return offences


def test_no_file_or_folder_in_the_tests_or_the_package_is_named_by_a_batch():
    named = [
        path.relative_to(ROOT).as_posix()
        for folder in (*SOURCES, "tests")
        for path in (ROOT / folder).rglob("*")
        if "__pycache__" not in path.parts and (path.is_dir() or path.suffix == ".py")
        for part in [path.stem.removeprefix("test_")]
        if BATCH_NAME.search(part) or re.search(r"(^|_)part_?\d+", part)
    ]
    assert named == [], "name files by what they test or do, not by the batch they were written in"


def test_every_test_file_sits_in_the_folder_of_what_it_tests():
    assert _test_tree_offences(ROOT / "tests", _package_folders()) == []


def test_the_test_tree_rules_catch_a_stray_folder_a_heap_at_the_top_and_batch_names(tmp_path: Path):
    tests = tmp_path / "tests"
    for name in ["agent/test_loop.py", "security/test_keys.py", "misc/test_things.py"] + [
        f"test_{i}.py" for i in range(TOP_LEVEL_TEST_FILES + 1)
    ]:
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_text("")
    offences = _test_tree_offences(tests, {"agent"})
    assert len(offences) == 2 and "26 test files at the top" in offences[0] and "tests/misc" in offences[1]
    assert all(BATCH_NAME.search(n) for n in ("session_p2", "scoring_more", "part1", "adapters_p3"))
