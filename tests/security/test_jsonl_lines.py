"""One record, one physical line (issue 19, item 4).

Text a cell prints or a kernel publishes can hold U+2028, U+2029, U+0085 and the other characters
``str.splitlines`` breaks lines on. Written raw into ``episode.jsonl`` or ``results.jsonl`` they split a record
in two, and every reader of the run failed. Every JSONL file now goes through :mod:`spatialclaw.jsonl`: those
characters are escaped, readers split on ``"\\n"`` only, and a line that still cannot be read is named while
every other record of the run is used.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from spatialclaw import jsonl
from spatialclaw.cli import main
from spatialclaw.testing import ScriptedProvider
from spatialclaw.trajectories.results import ResultsStore
from tests.bench_runs import QUIET_AGENT_OPTIONS

BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # everything str.splitlines splits on
HOSTILE = "a" + "b".join(BREAKS) + "c\ud800é"  # plus a lone surrogate (not encodable as UTF-8) and plain non-ASCII


def _physical_records(path: Path) -> list[dict]:
    """Each line as the most eager splitter sees it must be a whole JSON record."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- the module ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("char", [*BREAKS, "\ud800", "\udfff"], ids=lambda c: f"U+{ord(c):04X}")
def test_every_line_break_round_trips_on_one_physical_line(char: str) -> None:
    record = {"text": f"x{char}y", f"key{char}": [char]}
    line = jsonl.dumps_line(record)
    assert line.endswith("\n") and len(line.splitlines()) == 1 and line.count("\n") == 1
    line.encode("utf-8")  # never raises: nothing unencodable is left raw
    assert json.loads(line) == record


def test_appended_records_holding_every_separator_read_back_whole_one_per_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    records = [{"n": n, "text": HOSTILE * n} for n in range(4)]
    for record in records:
        jsonl.append(path, record)
    assert _physical_records(path) == records  # even str.splitlines sees exactly these lines
    found = jsonl.read(path)
    assert found.records == records and found.numbers == [1, 2, 3, 4] and not found.bad and not found.torn
    jsonl.write_atomic(path, reversed(records))
    assert jsonl.read(path).records == records[::-1]


def test_a_bad_line_is_reported_with_its_number_and_every_other_record_is_read(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(
        b'{"type": "a"}\n'
        b"not json\n"
        b'["a", "list"]\n'
        b"\xff\xfe not utf-8\n"
        b'{"no_type": 1}\n'
        b"\n"
        b'{"type": "b"}\n'
        b'{"type": "c", "tor'  # a write in progress: not bad, only torn
    )
    found = jsonl.read(path, {"type": str})
    assert [r["type"] for r in found.records] == ["a", "b"] and found.numbers == [1, 7]
    assert [(b.number, b.reason.split(":")[0]) for b in found.bad] == [
        (2, "not JSON"),
        (3, "a JSON list, not an object"),
        (4, "not UTF-8"),
        (5, "no 'type'"),
    ]
    assert found.torn
    assert found.problems("episode E")[0] == "episode E: line 2 unreadable (not JSON: Expecting value)"


def test_an_append_after_a_torn_line_starts_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2, "te')  # a crash mid-write
    jsonl.append(path, {"n": 3})
    found = jsonl.read(path)
    assert found.records == [{"n": 1}, {"n": 3}] and [b.number for b in found.bad] == [2]


def test_a_missing_or_unreadable_file_is_an_error_naming_its_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "missing.jsonl")):
        jsonl.read(tmp_path / "missing.jsonl")
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(ValueError, match=f"cannot read {tmp_path / 'folder.jsonl'}"):
        jsonl.read(tmp_path / "folder.jsonl")


def test_the_results_store_keeps_the_last_row_names_a_bad_line_and_loses_nothing_on_rewrite(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.jsonl")
    store.append({"task_id": "a", "status": "error"})
    with open(store.path, "ab") as f:
        f.write(b'{"task_id": "b", "status": \n')  # corrupted in place
    store.append({"task_id": "c", "status": "ok", "answer": HOSTILE})
    store.append({"task_id": "a", "status": "ok"})  # the last row of a task wins
    rows, problems = store.read()
    assert (
        list(rows) == [("a", 0), ("c", 0)] and rows[("a", 0)]["status"] == "ok" and rows[("c", 0)]["answer"] == HOSTILE
    )
    assert problems == [f"{store.path}: line 2 unreadable (not JSON: Expecting value)"]
    store.rewrite(rows.values())
    assert store.read() == (rows, [])
    assert store.unreadable_path.read_bytes() == b'{"task_id": "b", "status": \n'  # kept byte for byte


# -- the attack, end to end --------------------------------------------------------------------------------


def _task_file(tmp_path: Path) -> Path:
    image = tmp_path / "frame.png"
    Image.fromarray(np.full((48, 64, 3), 120, dtype=np.uint8)).save(image)
    tasks = [
        {"task_id": "text", "question": "What word is written on the wall?", "images": ["frame.png"]},
        {"task_id": "number", "question": "How many boxes are there?", "images": ["frame.png"], "answer": 2},
        {"task_id": "choice", "question": "Which is nearer?", "choices": ["box", "cup"], "images": ["frame.png"]},
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return path


PRINTS = "```python\nprint('before\\u2028middle\\u2029after\\x85end')\n```"


def _answer_cell(request: dict) -> str:
    text = json.dumps(request["messages"])
    value = (
        "'hello\\u2028world\\u2029and\\x85more'"
        if "written on the wall" in text
        else ("'A'" if "Options" in text else "2")
    )
    return f"```python\nprint('again\\u2028')\nanswer({value})\n```"


def _script(request: dict, index: int) -> str:
    return _answer_cell(request) if "before\\u2028middle" in json.dumps(request["messages"]) else PRINTS


def _bench(tasks: Path, run: Path, url: str, *extra: str) -> int:
    model = f"openai-compat:scripted@{url}"
    return main(
        [
            "bench",
            "--benchmark",
            str(tasks),
            "--model",
            model,
            "--out",
            str(run),
            "--no-progress",
            *QUIET_AGENT_OPTIONS,
            *extra,
        ]
    )


def test_a_cell_printing_line_separators_leaves_every_episode_and_row_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    tasks, run = _task_file(tmp_path), tmp_path / "run"
    with ScriptedProvider(_script) as server:
        assert _bench(tasks, run, server.url) == 0
        rows = {r["task_id"]: r for r in _physical_records(run / "results.jsonl")}
        assert len(rows) == 3 and rows["text"]["answer"] == "hello\u2028world\u2029and\x85more"
        for row in rows.values():
            events = _physical_records(run / row["trajectory_dir"] / "episode.jsonl")
            printed = [e["result"]["stdout"] for e in events if e["type"] == "cell"]
            assert printed[0] == "before\u2028middle\u2029after\x85end\n"
        assert main(["view", str(run)]) == 0
        page = (run / "index.html").read_text(encoding="utf-8")
        assert all(f'"task_id": "{task_id}"' in page for task_id in rows) and "unreadable" not in page
        assert main(["export", "--format", "openai", "--in", str(run), "--out", str(tmp_path / "sft.jsonl")]) == 0
        assert len(_physical_records(tmp_path / "sft.jsonl")) == 3
        assert main(["report", str(run)]) == 0
        assert json.loads((run / "report" / "report.json").read_text())["runs"][0]["rows"] == 3
        assert main(["rescore", str(run)]) == 0
        capsys.readouterr()
        assert _bench(tasks, run, server.url, "--resume") == 0
        assert "ran 0, kept 3" in capsys.readouterr().out


def test_a_corrupt_results_row_and_a_corrupt_episode_line_are_named_and_everything_else_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    tasks, run = _task_file(tmp_path), tmp_path / "run"
    with ScriptedProvider(_script) as server:
        assert _bench(tasks, run, server.url) == 0
        lines = (run / "results.jsonl").read_text(encoding="utf-8").split("\n")
        rows = {json.loads(line)["task_id"]: json.loads(line) for line in lines if line}
        lost = json.loads(lines[1])["task_id"]  # this row is corrupted in place
        lines[1] = lines[1][: len(lines[1]) // 2]
        (run / "results.jsonl").write_text("\n".join(lines), encoding="utf-8")
        kept = [task_id for task_id in rows if task_id != lost]
        log = run / rows[kept[0]]["trajectory_dir"] / "episode.jsonl"  # and one line of this episode
        events = log.read_text(encoding="utf-8").split("\n")
        events[2] = "{not json"
        log.write_text("\n".join(events), encoding="utf-8")
        bad_row = f"{run / 'results.jsonl'}: line 2 unreadable"
        bad_event = f"episode {log.parent}: line 3 unreadable"
        capsys.readouterr()

        assert main(["report", str(run)]) == 0
        assert bad_row in capsys.readouterr().out
        assert json.loads((run / "report" / "report.json").read_text())["runs"][0]["rows"] == 2

        assert main(["view", str(run)]) == 0
        page = (run / "index.html").read_text(encoding="utf-8")
        assert bad_row in page and bad_event in page
        assert all(f'"task_id": "{task_id}"' in page for task_id in kept)

        out = tmp_path / "sft.jsonl"
        assert main(["export", "--format", "openai", "--in", str(run), "--out", str(out)]) == 0
        assert bad_event in capsys.readouterr().err and len(_physical_records(out)) == 2  # 3 found, 1 left out

        assert _bench(tasks, run, server.url, "--resume") == 0  # the lost row's task runs again
        captured = capsys.readouterr()
        assert bad_row in captured.err and "ran 1, kept 2" in captured.out
        assert {r["task_id"] for r in _physical_records(run / "results.jsonl")} == set(rows)
        assert (run / "results.jsonl.unreadable").read_text(encoding="utf-8") == lines[1] + "\n"

        with open(run / "results.jsonl", "a", encoding="utf-8") as f:
            f.write("garbage\n")
        assert main(["rescore", str(run)]) == 0
        captured = capsys.readouterr()
        assert f"{run / 'results.jsonl'}: line 4 unreadable" in captured.err and "n=3" in captured.out
