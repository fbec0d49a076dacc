"""The judge: a model that scores the answers a benchmark's own rules leave to an LLM judge.

Judge-scored rows, today: SpatialTree-Bench questions whose ``metricfunc`` is ``gpteval`` (the paper asks
an LLM; without a judge they are run but left out of every number) and 3DSRBench replies in which
VLMEvalKit's option/text matching finds no option (VLMEvalKit then asks an LLM; without a judge they score
0). :func:`judge_reason` names the rule that hands a row to the judge. The judge reads the row's answer, or,
where the agent's answer parsing found none (a reply naming no option), the episode's final model reply.

Off by default: ``bench --judge SPEC`` (any model spec, ``scripted:`` and ``openai-compat:`` included) turns
it on for a run and is part of the run's identity; ``rescore`` uses the run's judge (``--judge`` sets
another). The prompt is a data file, ``benchmarks/judge.md`` (``$question``, ``$choices``,
``$ground_truth``, ``$answer``); the judge's last ``CORRECT`` or ``INCORRECT`` is its verdict (neither:
``unclear``, scored 0). Every verdict is kept in ``RUN/judge/<key>.json``, the key a sha256 of the judge
spec (without an ``openai-compat:`` URL), the prompt as sent and nothing else, so rescoring or resuming
never asks twice. A judged row keeps its rule score as ``rule_score`` and records ``judge``: the judge's
spec, its verdict, the reason, and whether the verdict came from the cache; the report counts judged rows
per judge.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from spatialclaw.task import Task
from spatialclaw.trajectories.run_dir import PRIVATE_FILE, PRIVATE_FOLDER
from spatialclaw.trajectories.safe_files import BadReference, read_ref, write_file

__all__ = ["JUDGE_DIR", "Judge", "final_reply", "judge_reason"]

JUDGE_DIR = "judge"
"""The verdict cache's folder inside a run directory: ``RUN/judge/``."""

PROMPT = "judge.md"
_VERDICT = re.compile(r"\b(INCORRECT|CORRECT)\b")


def judge_reason(task: Task, row: dict[str, Any]) -> str | None:
    """Why ``row`` (scored by the rules) goes to the judge, or None when its rules' score stands."""
    metric = str(task.meta.get("metric") or "")
    if task.ground_truth is None:
        return None
    if metric == "spatialtree_paper:unscored" and task.meta.get("metricfunc") == "gpteval":
        return "SpatialTree-Bench gpteval: the paper's LLM-judged question"
    if metric == "vlmeval_choice" and row.get("extracted") is None:
        return "3DSRBench: VLMEvalKit's matching found no option"
    return None


def final_reply(trajectory: Path | None) -> str | None:
    """The text of the last model reply in the episode at ``trajectory`` (None: no episode or no reply)."""
    from spatialclaw.trajectories.episode_log import load_episode

    if trajectory is None or not (trajectory / "episode.jsonl").is_file():
        return None
    texts = [
        str((call.get("response") or {}).get("text") or "") for call in load_episode(trajectory).of_type("model_call")
    ]
    return next((text for text in reversed(texts) if text.strip()), None)


def _prompt_template() -> Template:
    return Template(resources.files("spatialclaw.benchmarks").joinpath(PROMPT).read_text(encoding="utf-8"))


class Judge:
    """Judges rows with the model ``spec`` (loaded on the first verdict not in the cache), keeping every
    verdict in ``run_dir/judge/``. ``limits``: the run's per-provider limits (:mod:`spatialclaw.models.throttle`)."""

    def __init__(self, spec: str, run_dir: str | Path, limits: dict[str, Any] | None = None) -> None:
        from spatialclaw.models import parse_spec

        parse_spec(spec)  # a malformed spec fails here, not on the first judged row
        self.spec = spec
        self.run_dir = Path(run_dir)
        self.limits = dict(limits or {})
        self.template = _prompt_template()
        self._model: Any = None

    def prompt(self, task: Task, answer: Any) -> str:
        choices = "".join(f"\n{chr(65 + i)}. {c}" for i, c in enumerate(task.choices or []))
        return self.template.substitute(
            question=task.question,
            choices=f"Options:{choices}" if choices else "",
            ground_truth=task.ground_truth,
            answer=answer,
        )

    def _key(self, prompt: str) -> str:
        spec = self.spec.rsplit("@", 1)[0] if self.spec.startswith("openai-compat:") else self.spec
        return hashlib.sha256(json.dumps([spec, prompt]).encode()).hexdigest()

    def judge_row(self, task: Task, row: dict[str, Any], trajectory: Path | None = None) -> None:
        """Score ``row`` by the judge when :func:`judge_reason` hands it over (in place); else leave it.
        ``trajectory``: the row's episode folder, whose final reply is judged when the row has no answer."""
        row.pop("judge", None)
        reason = judge_reason(task, row)
        judged = row.get("answer") if row.get("answer") is not None else final_reply(trajectory)
        if reason is None or judged is None:
            return
        prompt = self.prompt(task, judged)
        key = self._key(prompt)
        entry, cached = self._load(key), True
        if entry is None:
            reply, cached = self._ask(prompt), False
            match = _VERDICT.findall(reply.upper())
            entry = {"key": key, "judge": self.spec, "verdict": match[-1].lower() if match else "unclear"}
            entry["reply"] = reply
            (self.run_dir / JUDGE_DIR).mkdir(exist_ok=True, mode=PRIVATE_FOLDER)
            write_file(
                self.run_dir / JUDGE_DIR / f"{key}.json",
                json.dumps(entry),
                inside=self.run_dir,
                permissions=PRIVATE_FILE,
            )
        row.setdefault("rule_score", row.get("score"))
        row["score"] = 1.0 if entry["verdict"] == "correct" else 0.0
        row["judge"] = {"model": self.spec, "verdict": entry["verdict"], "reason": reason, "cached": cached}
        if row.get("answer") is None:
            row["judge"]["judged"] = "final reply"

    def _load(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(read_ref(self.run_dir, JUDGE_DIR, key, ".json").decode("utf-8"))
        except FileNotFoundError:
            return None
        except (BadReference, OSError, UnicodeDecodeError, ValueError):
            return None  # unreadable or not a file of ours: ask again and replace it
        if not isinstance(data, dict) or data.get("key") != key or data.get("verdict") not in _VERDICTS:
            return None
        return data

    def _ask(self, prompt: str) -> str:
        from spatialclaw.chat import Message
        from spatialclaw.models import limit_model, load_model

        if self._model is None:
            self._model = limit_model(load_model(self.spec), self.limits)
        return str(self._model.chat([Message.text("user", prompt)], purpose="judge", temperature=0.0).text)

    def close(self) -> None:
        if self._model is not None:
            self._model.close()
            self._model = None


_VERDICTS = ("correct", "incorrect", "unclear")
