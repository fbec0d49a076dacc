"""The persistent kernel: state, errors, images, answers, timeouts, crashes, memory, secrets, reuse."""

from __future__ import annotations

import io
import os
import textwrap

import pytest
from PIL import Image

from spatialclaw import Kernel, KernelPool
from spatialclaw.kernel.environment import is_secret
from spatialclaw.primitives.runtime.namespace import NAMESPACE_NAMES


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    k = Kernel(
        meta={"question": "Which is nearer?", "choices": ["the chair", "the table"]},
        workdir=tmp_path_factory.mktemp("episode"),
    )
    yield k
    k.shutdown()


def run(kernel: Kernel, code: str, **kwargs):
    return kernel.execute(textwrap.dedent(code), **kwargs)


def test_variables_persist_and_are_reported(kernel):
    first = run(kernel, "a = np.arange(12, dtype=np.float32).reshape(3, 4)\nnames = ['x', 'y']")
    assert first.ok and first.error is None
    reported = {v.name: v for v in first.variables}
    assert reported["a"].shape == [3, 4] and reported["a"].dtype == "float32" and reported["a"].nbytes == 48
    assert reported["names"].length == 2
    second = run(kernel, "print(a.sum(), len(names))")
    assert second.stdout.strip() == "66.0 2"
    assert second.variables == []


def test_failing_line_three_keeps_lines_one_and_two(kernel):
    result = run(kernel, "p = 1\nq = p + 1\nr = q / 0\ns = 4")
    assert result.status == "error"
    assert result.error.type == "ZeroDivisionError"
    assert result.error.line == 3
    assert result.error.source == "r = q / 0"
    assert "ipykernel" not in result.error.traceback and "IPython" not in result.error.traceback
    assert {v.name for v in result.variables} >= {"p", "q"}
    assert run(kernel, "print(p, q, 'r' in dir(), 's' in dir())").stdout.strip() == "1 2 False False"


def test_error_inside_a_function_reports_the_cell_line(kernel):
    result = run(kernel, "def f(x):\n    return x['missing']\n\nf({})")
    assert result.error.type == "KeyError"
    assert result.error.line == 2 and "x['missing']" in result.error.source
    assert "line 4" in result.error.traceback


def test_syntax_error_gives_line(kernel):
    result = run(kernel, "x = 1\ny = (2 +\n")
    assert result.error.type == "SyntaxError"
    assert result.error.line == 2


def test_images_arrive_as_png_with_origin_and_label(kernel):
    result = run(
        kernel,
        """
        import matplotlib.pyplot as pyplot
        show(np.zeros((576, 768, 3), dtype=np.uint8), label="black")
        pyplot.plot([0, 1], [1, 0]); pyplot.title("a line"); pyplot.show()
        fig = pyplot.figure(); pyplot.imshow(np.eye(5))
        from IPython.display import display
        display(Image.new("RGB", (40, 30), "red"))
        Image.new("RGB", (20, 10), "blue")
    """,
    )
    assert result.ok, result.to_text()
    origins = [img.origin for img in result.images]
    assert origins == ["show", "plt.show", "display", "result", "figure"]
    for img in result.images:
        assert img.png.startswith(b"\x89PNG\r\n\x1a\n")
        decoded = Image.open(io.BytesIO(img.png))
        assert decoded.size == (img.width, img.height)
    assert result.images[0].label == "black" and (result.images[0].width, result.images[0].height) == (768, 576)
    assert result.images[1].label == "a line"
    assert Image.open(io.BytesIO(result.images[2].png)).convert("RGB").getpixel((5, 5)) == (255, 0, 0)


def test_answer_is_captured_even_if_a_later_line_fails(kernel):
    result = run(kernel, "answer('the table')\nraise RuntimeError('after the answer')")
    assert result.answered and result.answer == "B"
    assert result.error.type == "RuntimeError"


def test_answer_is_validated_against_choices(kernel):
    result = run(kernel, "answer('the sofa')")
    assert not result.answered
    assert result.error.type == "AnswerError" and "A. the chair" in result.error.message


def test_huge_output_is_truncated(kernel):
    result = run(kernel, "print('x' * 10_000_000)\nprint('end')")
    assert len(result.stdout) < 1_100_000
    assert result.stdout.rstrip().endswith("end")
    text = result.to_text(limit=4000)
    assert len(text) < 4500 and "characters cut" in text


def test_non_utf8_bytes_and_unicode_survive(kernel):
    result = run(
        kernel, "import os, sys\nprint('Grüße 世界 🎉')\nsys.stdout.flush()\nos.write(1, b'raw \\xff\\xfe bytes\\n')"
    )
    assert "Grüße 世界 🎉" in result.stdout
    assert "raw" in result.stdout and "bytes" in result.stdout


def test_empty_output_is_stated(kernel):
    assert run(kernel, "z = 1").to_text() == "[the cell ran without error and printed nothing]"


def test_infinite_loop_is_interrupted_and_state_kept(kernel):
    run(kernel, "kept = 42")
    result = run(kernel, "n = 0\nwhile True:\n    n += 1", timeout=1.0)
    assert result.status == "timeout" and not result.restarted
    assert result.error.type == "TimeoutError" and result.error.line in (2, 3)
    assert run(kernel, "print(kept, n > 0)").stdout.strip() == "42 True"


def test_uninterruptible_cell_restarts_and_restores(tmp_path):
    with Kernel(workdir=tmp_path, interrupt_grace_s=1.0) as k:
        assert k.execute("saved = {'v': 7}\ndef twice(x):\n    return 2 * x").ok
        result = k.execute(
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", timeout=1.0
        )
        assert result.status == "timeout" and result.restarted
        assert "saved" in result.restored and "twice" in result.restored
        assert k.execute("print(twice(saved['v']))").stdout.strip() == "14"


@pytest.mark.parametrize("crash", ["import os; os._exit(1)", "import ctypes; ctypes.string_at(0)"])
def test_dying_kernel_is_recovered_with_state(tmp_path, crash):
    with Kernel(workdir=tmp_path) as k:
        before = k.pid
        assert k.execute("points = np.ones((100, 3))\nhandle = open('scratch.txt', 'w')").ok
        result = k.execute(crash, timeout=30)
        assert result.status == "crashed" and result.restarted
        assert result.error.type == "KernelDied"
        assert k.pid != before
        assert result.restored == ["points"]
        assert result.lost == ["handle"]
        assert "handle cannot be pickled" in " ".join(result.notes)
        assert k.execute("print(points.shape)").stdout.strip() == "(100, 3)"


def test_memory_blow_up_is_a_clear_error(tmp_path):
    with Kernel(workdir=tmp_path, memory_limit_mb=1024) as k:
        result = k.execute("big = np.ones((20_000, 20_000))")
        assert result.status == "error" and result.error.type == "MemoryError"
        assert "memory cap of 1024 MiB" in result.error.message
        assert k.execute("print('still here')").stdout.strip() == "still here"


def test_kernel_environment_has_no_secrets_and_runs_in_workdir(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-not-leak")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "t0ken")
    monkeypatch.setenv("SPATIALCLAW_HARMLESS_SETTING", "visible")
    with Kernel(workdir=tmp_path) as k:
        result = k.execute(
            "import os\nprint(sorted(k for k in os.environ if 'KEY' in k or 'TOKEN' in k))\n"
            "print(os.environ.get('SPATIALCLAW_HARMLESS_SETTING'))\nprint(os.getcwd())"
        )
        lines = result.stdout.splitlines()
        assert lines[0] == "[]"
        assert lines[1] == "visible"
        assert os.path.realpath(lines[2]) == os.path.realpath(tmp_path)


def test_pool_reset_leaves_nothing_of_the_previous_episode(tmp_path):
    with KernelPool(size=1) as pool:
        first = pool.acquire(meta={"question": "first?"})
        first.execute(
            "secret_var = 'episode one'\nimport matplotlib.pyplot as pyplot\nfig = pyplot.figure()\nopen('left_behind.txt', 'w').write('x')"
        )
        first.execute("scene_marker = meta.question")
        pid = first.pid
        pool.release(first)
        second = pool.acquire(meta={"question": "second?"})
        assert second is first and second.pid == pid
        result = second.execute(
            "import os\nleft = [n for n in dir() if not n.startswith('_') and n not in ('In', 'Out', 'exit', 'quit', 'get_ipython', 'open')]\n"
            f"print(sorted(set(left) - {set(NAMESPACE_NAMES) | {'os'}!r}))\n"
            "print(meta.question)\nprint(len(In))\nprint(os.listdir('.'))\n"
            "import matplotlib.pyplot as pyplot\nprint(pyplot.get_fignums())"
        )
        lines = result.stdout.splitlines()
        assert lines[0] == "[]"
        assert lines[1] == "second?"
        assert int(lines[2]) <= 2
        assert "left_behind.txt" not in lines[3]
        assert lines[4] == "[]"
        pool.release(second)


def test_snapshots_stay_out_of_the_workdir_and_go_at_shutdown(tmp_path):
    kernel = Kernel(workdir=tmp_path)
    assert kernel.execute("kept = list(range(1000))").ok
    snapshot_dir = kernel._snapshot_dir
    assert (snapshot_dir / "kept.pkl").exists()
    assert not any(p.suffix == ".pkl" for p in tmp_path.rglob("*"))
    kernel.shutdown()
    assert not snapshot_dir.exists() and tmp_path.exists()


@pytest.mark.parametrize(
    "name, secret",
    [
        ("OPENAI_API_KEY", True),
        ("ANTHROPIC_API_KEY", True),
        ("GITHUB_TOKEN", True),
        ("HF_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("DB_PASSWORD", True),
        ("RAY_AUTH_MODE", False),
        ("PATH", False),
        ("SPATIALCLAW_CACHE", False),
    ],
)
def test_secret_names(name, secret):
    assert is_secret(name) is secret
