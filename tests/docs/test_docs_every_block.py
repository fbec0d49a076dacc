"""Every fenced block of README.md, CONTRIBUTING.md and docs/*.md runs as written from a bare clone (no
``../shared``, no API key, no hub weights, an empty home folder) or is skipped with a reviewed reason:
``tests/docs/doc_block_table.py`` says which and how. A block in neither table, or a listed block that is gone,
fails the first test. ``SPATIALCLAW_SHOW_DOC_OUTPUT=1 pytest -s`` prints what each run printed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.doc_examples import (
    Block,
    all_blocks,
    answering_server,
    block,
    bootstrap_is_a_no_op,
    clone,
    lines_in_order,
    make_inputs,
    matching,
    run_blocks,
    user_env,
)
from tests.docs.doc_block_table import RUNS, SKIPPED
from tests.paths import REPO_ROOT


def _claims() -> list[tuple[str, str, str]]:
    """(document, snippet, who) for every block the tables name."""
    claims = [(document, snippet, f"SKIPPED[{document!r}, {snippet!r}]") for document, snippet in SKIPPED]
    for name, run in RUNS.items():
        claims += [(run.document, snippet, f"RUNS[{name!r}]") for snippet in run.blocks]
        if run.output is not None:
            claims.append((run.document, run.output, f"RUNS[{name!r}].output"))
    return claims


def _problems(blocks: list[Block]) -> list[str]:
    """What is wrong between the tables and ``blocks``: a claim naming no block or several, a block claimed
    twice, a block claimed by neither table."""
    problems, claimed = [], {}
    for document, snippet, who in _claims():
        found = matching(document, snippet, blocks)
        if len(found) != 1:
            problems.append(f"{who}: {len(found)} blocks of {document} contain {snippet!r} (gone? update the table)")
        for page_block in found[:1]:
            if page_block in claimed:
                problems.append(f"{page_block} is claimed by {claimed[page_block]} and {who}")
            claimed[page_block] = who
    problems += [
        f"{b} is neither run nor skipped (add it to RUNS or SKIPPED): {b.code[:100]!r}"
        for b in blocks
        if b not in claimed
    ]
    return problems


def test_every_block_is_run_or_skipped_with_a_reason() -> None:
    assert not _problems(all_blocks()), "\n".join(_problems(all_blocks()))
    assert all(reason.strip() for reason in SKIPPED.values())


def test_the_check_fails_for_a_new_block_and_for_a_gone_one(tmp_path: Path) -> None:
    """On a copy of the pages: a block added to one is reported unclaimed, a block removed leaves its claim
    naming nothing."""
    root = REPO_ROOT
    for page in ["README.md", "CONTRIBUTING.md", *(f"docs/{p.name}" for p in (root / "docs").glob("*.md"))]:
        (tmp_path / page).parent.mkdir(exist_ok=True)
        (tmp_path / page).write_text((root / page).read_text(encoding="utf-8"), encoding="utf-8")
    assert not _problems(all_blocks(tmp_path))
    frames = tmp_path / "docs" / "frames.md"
    frames.write_text(frames.read_text() + "\n```bash\nspatialclaw something-new\n```\n")
    errors = tmp_path / "docs" / "errors.md"
    [transcript] = [b for b in all_blocks(tmp_path) if b.document == "docs/errors.md"]
    errors.write_text(errors.read_text().replace(f"```console\n{transcript.code}```\n", ""))
    problems = _problems(all_blocks(tmp_path))
    assert len(problems) == 2, problems
    assert (
        "docs/frames.md" in problems[1] and "something-new" in problems[1] and "neither run nor skipped" in problems[1]
    )
    assert problems[0].startswith("RUNS['errors']: 0 blocks of docs/errors.md contain"), problems


def test_no_block_that_runs_reads_the_project_data_folder() -> None:
    """``../shared/data`` is the project's, not a user's: a block naming it is skipped, saying it needs it."""
    blocks = all_blocks()
    for page_block in blocks:
        if "../shared" in page_block.code or "SPATIALCLAW_TEST_DATA" in page_block.code:
            reasons = [r for (d, s), r in SKIPPED.items() if page_block in matching(d, s, blocks)]
            assert reasons and "data folder" in reasons[0], f"{page_block} reads the project's data folder"


@pytest.fixture(scope="module")
def bare_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = clone(tmp_path_factory.mktemp("every-block") / "clone")
    assert not (copy.parent / "shared").exists()
    return copy


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if r.slow else []) for n, r in RUNS.items()])
def test_the_block_runs_from_a_bare_clone(name: str, bare_clone: Path, tmp_path: Path) -> None:
    run = RUNS[name]
    if any("scripts/demo.sh" in snippet for snippet in run.blocks) and not bootstrap_is_a_no_op():
        pytest.skip(
            "the virtualenv is not the one scripts/bootstrap.sh leaves (stale stamp): demo.sh would reinstall it"
        )
    work = bare_clone if run.cwd == "root" else bare_clone / "work" / name
    work.mkdir(parents=True, exist_ok=True)
    make_inputs(run.inputs, work)
    env = {**user_env(tmp_path / "home"), **dict(run.env)}
    if run.server:
        with answering_server() as server:
            printed = run_blocks(run, bare_clone, work, {**env, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "x"})
    else:
        printed = run_blocks(run, bare_clone, work, env)
    if os.environ.get("SPATIALCLAW_SHOW_DOC_OUTPUT"):
        print(printed)
    for pattern in run.shows:
        assert re.search(pattern, printed, flags=re.MULTILINE), f"{pattern!r} not in:\n{printed[-4000:]}"
    if run.output is not None:
        shown = block(run.document, run.output, all_blocks()).code.splitlines()
        lines_in_order(shown, printed.splitlines())
