"""The judge: off by default; with ``--judge`` the rows a benchmark's rules leave to an LLM judge are scored by
it over real HTTP, its verdicts are kept in the run (a rescore asks nothing again), and the report names them."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from spatialclaw.cli import main
from spatialclaw.runner.judge import judge_reason
from spatialclaw.runner.run import aggregate_rows
from spatialclaw.task import FrameSpec, Task
from spatialclaw.testing.provider_server import ScriptedProvider


def _tasks(folder: Path) -> Path:
    """Two 3DSRBench-scored questions whose replies name no option (no answer is parsed, VLMEvalKit's matching
    finds none; VLMEvalKit hands such replies to a judge)."""
    Image.new("RGB", (32, 24), "red").save(folder / "red.png")
    lines = [
        {"task_id": f"q{i}", "question": f"Which colour is image {i}?", "images": ["red.png"]}
        | {"choices": ["red", "blue"], "answer": "A", "metric": "vlmeval_choice"}
        for i in range(2)
    ]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / "replies.txt").write_text("ANSWER: the colour of a ripe tomato\n" * 4)  # no option named
    return folder / "tasks.jsonl"


def _rows(run: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return {row["task_id"]: row for row in rows}


def _bench(folder: Path, run: Path, *extra: str) -> int:
    return main(
        ["bench", "--benchmark", str(_tasks(folder)), "--model", f"scripted:replies={folder / 'replies.txt'}"]
        + ["--interface", "no-tools", "--out", str(run), "--no-progress", *extra]
    )


def test_without_a_judge_the_rules_score_stands_and_nothing_says_judge(tmp_path, capsys):
    run = tmp_path / "run"
    assert _bench(tmp_path, run) == 0
    rows = _rows(run)
    assert [rows[t]["score"] for t in ("q0", "q1")] == [0.0, 0.0]
    assert not any("judge" in row for row in rows.values()) and not (run / "judge").exists()


def test_the_judge_scores_what_the_rules_cannot_keeps_its_verdicts_and_the_report_names_it(tmp_path, capsys):
    run = tmp_path / "run"
    with ScriptedProvider(["I think so.\nCORRECT", "INCORRECT"]) as judge:
        spec = f"openai-compat:judge@{judge.url}"
        assert _bench(tmp_path, run, "--judge", spec) == 0
        assert judge.calls == 2
        asked = judge.requests[0]["messages"][0]["content"]
        text = asked if isinstance(asked, str) else asked[0]["text"]
        assert "the colour of a ripe tomato" in text and "Reference answer: A" in text and "A. red" in text
        rows = _rows(run)
        assert [rows[t]["score"] for t in ("q0", "q1")] == [1.0, 0.0]
        assert rows["q0"]["rule_score"] == 0.0
        assert rows["q0"]["judge"] == {
            "model": spec,
            "verdict": "correct",
            "reason": "3DSRBench: VLMEvalKit's matching found no option",
            "cached": False,
            "judged": "final reply",
        }
        assert len(list((run / "judge").glob("*.json"))) == 2
        assert json.loads((run / "manifest.json").read_text())["config"]["judge"] == spec
        # rescoring uses the run's judge and its kept verdicts: the judge is not asked again
        assert main(["rescore", str(run)]) == 0
        assert judge.calls == 2
        rows = _rows(run)
        assert [rows[t]["score"] for t in ("q0", "q1")] == [1.0, 0.0] and rows["q0"]["judge"]["cached"] is True
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert "**Judge-scored:**" in report and f"2 row(s) scored by the judge {spec}" in report
    assert json.loads((tmp_path / "report" / "report.json").read_text())["runs"][0]["judged"] == {spec: ["q0", "q1"]}


def test_rescore_with_a_judge_judges_a_run_made_without_one(tmp_path, capsys):
    run = tmp_path / "run"
    assert _bench(tmp_path, run) == 0
    verdicts = tmp_path / "verdicts.txt"
    verdicts.write_text("CORRECT\nCORRECT\n")
    assert main(["rescore", str(run), "--judge", f"scripted:replies={verdicts}"]) == 0
    assert [row["score"] for row in _rows(run).values()] == [1.0, 1.0]
    assert "overall 100.0%" in capsys.readouterr().out


def _spatialtree(metricfunc: str) -> Task:
    return Task(
        question="Describe the route.",
        inputs=[FrameSpec.images(["x.png"])],
        answer_type="text",
        ground_truth="left then right",
        task_id=f"st/{metricfunc}",
        category="nav",
        meta={"metric": "spatialtree_paper:unscored", "paper_scored": False, "metricfunc": metricfunc},
    )


def test_spatialtree_gpteval_rows_go_to_the_judge_and_count_once_judged():
    judged, simulator = _spatialtree("gpteval"), _spatialtree("gravityeval")
    assert judge_reason(judged, {"answer": "left, right"}) is not None
    assert judge_reason(simulator, {"answer": "left, right"}) is None  # a simulator metric: no LLM verdict
    tasks = {t.task_id: t for t in (judged, simulator)}
    rows = [{"task_id": t, "category": "nav", "score": 0.0} for t in tasks]
    before = aggregate_rows(rows, tasks, "spatialtree_scored")
    assert before.overall is None and before.counts["unscored"] == 2  # the paper's setting: both left out
    rows[0].update(score=1.0, judge={"model": "scripted:x", "verdict": "correct"})
    aggregate = aggregate_rows(rows, tasks, "spatialtree_scored")
    assert aggregate.overall == 1.0 and aggregate.counts["unscored"] == 1
