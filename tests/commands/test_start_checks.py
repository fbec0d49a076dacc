"""Checks before anything runs or is written: a JPEG corrupt inside its data is refused by `run` at start
(no --out left to block the rerun), and `bench --suite paper` without --source-root is refused instead of
quietly loading every benchmark from the hub."""

from __future__ import annotations

from PIL import Image

from spatialclaw.cli import main


def _corrupt_inside(path):
    """A JPEG whose header, size and end marker are intact but whose entropy-coded data is garbage."""
    Image.new("RGB", (64, 48), "red").save(path, quality=90)
    data = bytearray(path.read_bytes())
    for index in range(len(data) // 2, len(data) - 10):
        data[index] = 0xFF if index % 7 == 0 else 0x00
    path.write_bytes(bytes(data))


def test_run_refuses_a_jpeg_corrupt_inside_its_data_before_writing_anything(tmp_path, capsys):
    bad = tmp_path / "bad.jpg"
    _corrupt_inside(bad)
    out = tmp_path / "out"
    code = main(["run", "--frames", str(bad), "--question", "How many red regions?"] + [
        "--model", "scripted:look-and-answer", "--out", str(out)
    ])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert f"cannot decode image {bad}" in err and "corrupt inside its data" in err
    assert not out.exists()  # the rerun with a good file and the same --out is not blocked


def test_bench_suite_paper_without_a_source_root_is_refused(tmp_path, capsys):
    code = main(["bench", "--suite", "paper", "--model", "scripted:look-and-answer", "--out", str(tmp_path / "s")])
    assert code == 2
    assert "--suite paper needs --source-root ROOT" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
