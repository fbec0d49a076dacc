"""The IPython extension driven through real notebooks executed by nbclient (a real Jupyter kernel):
load the extension, load frames, run primitives with inline images, and ``%%spatialclaw`` against
the local scripted model server over HTTP."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from PIL import Image, ImageDraw

from spatialclaw.testing.provider_server import Reply, ScriptedProvider
from tests.paths import REPO_ROOT


@pytest.fixture
def frames_dir(tmp_path: Path) -> Path:
    """Three 64x48 grey frames; frame 1 has a 10x8 green rectangle with its top-left corner at (20, 10)."""
    folder = tmp_path / "frames"
    folder.mkdir()
    for index in range(3):
        image = Image.new("RGB", (64, 48), (128, 128, 128))
        if index == 1:
            ImageDraw.Draw(image).rectangle([20, 10, 29, 17], fill=(0, 220, 0))
        image.save(folder / f"{index:03d}.png")
    return folder


def run_notebook(sources: list[str], tmp_path: Path) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    client = NotebookClient(
        notebook,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO_ROOT)}},
    )
    client.execute()
    nbformat.write(notebook, tmp_path / "executed.ipynb")
    return notebook


def pngs(cell: nbformat.NotebookNode) -> list[Image.Image]:
    return [
        Image.open(io.BytesIO(base64.b64decode(output["data"]["image/png"]))).convert("RGB")
        for output in cell.outputs
        if output.get("output_type") in ("display_data", "execute_result") and "image/png" in output.get("data", {})
    ]


def stream_text(cell: nbformat.NotebookNode, name: str = "stdout") -> str:
    return "".join(o["text"] for o in cell.outputs if o.get("output_type") == "stream" and o.get("name") == name)


def markdown_texts(cell: nbformat.NotebookNode) -> list[str]:
    return [o["data"]["text/markdown"] for o in cell.outputs if "text/markdown" in o.get("data", {})]


def test_extension_loads_frames_and_primitives_render_inline(frames_dir: Path, tmp_path: Path) -> None:
    notebook = run_notebook(
        [
            "%load_ext spatialclaw",
            f"%spatial_load {frames_dir} --question 'Where is the green box?'",
            "print(len(frames), frames[1].index, meta.question, type(geom).__name__)\nshow(frames[1], label='second')",
            "blobs = find_color(frames[1], 'green')\nprint(round(blobs[0].area), tuple(round(v, 1) for v in blobs[0].centroid))\n"
            "show(zoom(frames[1], (16, 6, 34, 22)))",
            "plt.plot([0, 1], [0, 1])\nplt.title('line')\nplt.show()",
            "from spatialclaw.interactive.notebook import spatial_load\nsecond = spatial_load(str(frames[2].source))\nprint(len(frames), frames[0].index)",
        ],
        tmp_path,
    )
    load_cell, show_cell, primitive_cell, plot_cell, python_cell = notebook.cells[1:]
    assert "loaded 3 frame(s) (64x48), indices 0..2" in stream_text(load_cell)

    printed = stream_text(show_cell).split()
    assert printed[:3] == ["3", "1", "Where"]
    shown = pngs(show_cell)
    assert len(shown) == 1 and shown[0].size == (256, 192)  # a 64x48 frame is shown 4x, pixels kept sharp
    assert shown[0].getpixel((24 * 4, 13 * 4)) == (0, 220, 0) and shown[0].getpixel((5 * 4, 5 * 4)) == (128, 128, 128)

    area, centroid = stream_text(primitive_cell).strip().split(" ", 1)
    assert int(area) == 80 and centroid == "(24.5, 13.5)"
    zoomed = pngs(primitive_cell)
    assert len(zoomed) == 1 and zoomed[0].width > 18  # the crop is enlarged for viewing

    assert len(pngs(plot_cell)) == 1
    assert stream_text(python_cell).strip() == "1 0"


def test_spatialclaw_magic_runs_the_agent_in_the_notebook_namespace(frames_dir: Path, tmp_path: Path) -> None:
    script = [
        Reply(
            "I will measure the green box first.\n```python\nblobs = find_color(frames[1], 'green')\n"
            "box_area = round(blobs[0].area)\nprint('area', box_area)\nshow(frames[1], label='green frame')\n```"
        ),
        "The box is in the second frame.\n```python\nanswer('B')\n```",
    ]
    out = tmp_path / "episode"
    with ScriptedProvider(script) as server:
        notebook = run_notebook(
            [
                "%load_ext spatialclaw",
                f"%spatial_load {frames_dir}",
                "mine = 7",
                f"%%spatialclaw --model openai-compat:scripted-model@{server.url} --choices first second third --out {out}\n"
                "Which frame shows the green box?",
                "print(box_area * 2, spatialclaw_result.answer, spatialclaw_result.status, mine)",
            ],
            tmp_path,
        )
        requests = list(server.requests)

    agent_cell, after_cell = notebook.cells[3], notebook.cells[4]
    markdown = markdown_texts(agent_cell)
    assert "**Step 1** — I will measure the green box first." in markdown
    assert "**Step 2** — The box is in the second frame." in markdown
    assert any("**Answer: 'B'** after 2 step(s)" in text for text in markdown), markdown
    code_outputs = [
        o
        for o in agent_cell.outputs
        if "text/html" in o.get("data", {}) and "find_color" in o["data"].get("text/plain", "")
    ]
    assert code_outputs, "the step's code is rendered before its output"
    assert "area 80" in stream_text(agent_cell)
    rendered = pngs(agent_cell)
    assert len(rendered) == 1 and rendered[0].getpixel((24 * 4, 13 * 4)) == (0, 220, 0)  # shown 4x

    assert stream_text(after_cell).strip() == "160 B answered 7"

    assert len(requests) == 2
    second_request = json.dumps(requests[1])
    assert "area 80" in second_request and "image_url" in second_request

    from spatialclaw.trajectories.episode_log import load_episode

    episode = load_episode(out)
    assert episode.complete and episode.answer == "B"
    assert [event["result"]["status"] for event in episode.of_type("cell")] == ["ok", "ok"]
    assert len(episode.of_type("model_call")) == 2


def test_spatialclaw_magic_without_frames_says_what_to_do(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext spatialclaw"),
        nbformat.v4.new_code_cell("%%spatialclaw --model openai:gpt-4.1\nHow far?"),
    ]
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(REPO_ROOT)}},
    )
    client.execute()
    errors = [o for o in notebook.cells[1].outputs if o.get("output_type") == "error"]
    assert errors and "run %spatial_load" in errors[0]["evalue"]


def test_shell_executor_reports_errors_timeouts_results_and_figures(tmp_path: Path) -> None:
    """The in-process executor behind %%spatialclaw, exercised inside a real notebook kernel."""
    cells = [
        ("a = 1\nb = a / 0", 5),
        ("import time\ntime.sleep(30)", 0.5),
        ("x = np.zeros((3, 4))\nx.shape", 5),
        ("plt.plot([1, 2])", 5),
        ("def f(:\n    pass", 5),
        ("import sys\nsys.exit(3)", 5),
        ("print(a, 'still here')", 5),
    ]
    notebook = run_notebook(
        [
            "%load_ext spatialclaw",
            "import numpy as np, matplotlib.pyplot as plt, json\n"
            "from spatialclaw.interactive.shell_executor import ShellExecutor\n"
            "executor = ShellExecutor(get_ipython())\n"
            f"results = [executor.execute(code, timeout=limit) for code, limit in {cells!r}]\n"
            "print(json.dumps([r.to_dict(with_image_bytes=False) for r in results]))",
        ],
        tmp_path,
    )
    division, sleep, shape, figure, syntax, exit_call, after = json.loads(
        stream_text(notebook.cells[1]).strip().splitlines()[-1]
    )
    assert division["status"] == "error" and division["error"]["type"] == "ZeroDivisionError"
    assert division["error"]["line"] == 2 and division["error"]["source"] == "b = a / 0"
    assert [v["name"] for v in division["variables"]] == ["a"]

    assert sleep["status"] == "timeout" and "0.5 s" in sleep["error"]["message"]
    assert sleep["duration_s"] < 10

    assert shape["status"] == "ok" and shape["result_text"] == "(3, 4)"
    assert shape["variables"][0]["name"] == "x" and shape["variables"][0]["shape"] == [3, 4]

    assert figure["status"] == "ok" and [i["origin"] for i in figure["images"]] == ["figure"]

    assert syntax["status"] == "error" and syntax["error"]["type"] == "SyntaxError" and syntax["error"]["line"] == 1
    assert exit_call["status"] == "error" and exit_call["error"]["type"] == "SystemExit"
    assert after["status"] == "ok" and after["stdout"] == "1 still here\n"


def test_the_try_it_cells_of_the_notebook_guide_run_as_written(tmp_path: Path) -> None:
    from tests.doc_examples import code_blocks

    cells = code_blocks("notebook.md", "Try it", "python")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source.rstrip("\n")) for source in cells]
    NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    agent_cell = notebook.cells[-2]
    assert "**Step 1** — Let me find the box in both frames." in markdown_texts(agent_cell)
    assert "[14.5, 44.5]" in stream_text(agent_cell)
    assert stream_text(notebook.cells[-1]).startswith("[14.5, 44.5] B ")
    assert len(pngs(notebook.cells[2])) == 2


def test_vlm_in_the_notebook_and_in_the_agent_run(frames_dir: Path, tmp_path: Path) -> None:
    script = [
        "A green box on grey.",  # the notebook's own vlm.ask
        "```python\nseen = vlm.ask(frames[1], 'What is there?')\nprint(seen)\n```",  # agent step 1
        "A green rectangle.",  # the agent's vlm.ask
        "```python\nanswer('B')\n```",  # agent step 2
        "Still a green box.",  # the notebook's vlm.ask again
    ]
    out = tmp_path / "episode"
    with ScriptedProvider(script) as server:
        model = f"openai-compat:scripted@{server.url}"
        notebook = run_notebook(
            [
                "%load_ext spatialclaw",
                f"%spatial_load {frames_dir} --vlm-model {model}",
                "print(vlm.ask(frames[1], 'Describe it.'))",
                f"%%spatialclaw --model {model} --choices first second third --out {out}\nWhich frame shows the green box?",
                "print(seen, '|', vlm.ask(frames[1], 'And now?'))",
            ],
            tmp_path,
        )
        requests = list(server.requests)
    assert stream_text(notebook.cells[2]).strip() == "A green box on grey."
    assert "A green rectangle." in stream_text(notebook.cells[3])
    assert stream_text(notebook.cells[4]).strip() == "A green rectangle. | Still a green box."
    assert len(requests) == 5

    from spatialclaw.trajectories.episode_log import load_episode

    episode = load_episode(out)
    assert [c["purpose"] for c in episode.of_type("model_call")] == ["step", "vlm.ask", "step"]
    assert episode.answer == "B"
