"""Numbers and claims the docs state about defaults and behaviour, checked against the code: the image budget,
which sessions export, DA3 from a sandboxed kernel, and the help of `run` naming the keyless models."""

from __future__ import annotations

import re
from pathlib import Path

from spatialclaw.agent.config import AgentConfig
from spatialclaw.cli import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _subparser(name: str):
    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.dest == "command"]
    return commands.choices[name]


def test_every_stated_image_budget_is_the_agents_default_and_runs():
    config = AgentConfig()
    stated = {"max_images_per_request": [], "max_image_mb_per_request": []}
    for page in DOCS.glob("*.md"):
        for key, values in stated.items():
            values += [float(v) for v in re.findall(rf"`{key}=([0-9.]+)`", page.read_text())]
    assert stated["max_images_per_request"] and stated["max_image_mb_per_request"]
    assert set(stated["max_images_per_request"]) == {config.max_images_per_request}
    assert set(stated["max_image_mb_per_request"]) == {config.max_image_mb_per_request}
    agent = (DOCS / "agent.md").read_text()
    run_default = _subparser("run").get_default("max_images")
    assert re.search(rf"`spatialclaw run`\s+sends at most {run_default} images", agent)
    placeholder = re.search(r"request limit of (\d+) images / ([0-9.]+) MB", agent)
    assert placeholder and (int(placeholder[1]), float(placeholder[2])) == (
        run_default,
        config.max_image_mb_per_request,
    )


def test_the_docs_say_sessions_export_with_their_drivers_words_as_the_exporter_does():
    from spatialclaw.export.runner import SESSION_WITHOUT_TURNS

    sessions = " ".join((DOCS / "sessions.md").read_text().split())
    assert "`spatialclaw export` skips them" not in sessions
    assert "--reasoning" in sessions and SESSION_WITHOUT_TURNS.split(" (")[0] in sessions


def test_the_docs_no_longer_say_da3_is_out_of_reach_of_a_sandboxed_kernel():
    text = " ".join((DOCS / "depth_and_reconstruction.md").read_text().split())
    assert "does not yet have the service's socket bound" not in text
    assert "relay" in text  # tests/services/test_ray_service_env.py runs sandboxed episodes through it


def test_run_help_names_the_keyless_scripted_models():
    help_text = " ".join(_subparser("run").format_help().split())
    assert "scripted:look-and-answer" in help_text and "scripted:replies=FILE" in help_text


def test_the_ray_perception_example_prints_its_error_not_a_blank_line():
    text = (DOCS / "benchmarks.md").read_text()
    block = text[text.index("service = start_perception_service(actors=1, num_gpus=0)") :]
    block = block[: block.index("```")]
    assert "print(result.stdout)" not in block  # a failed cell has no stdout: it printed an empty line
    assert "result.stdout if result.ok else result.to_text()" in block
