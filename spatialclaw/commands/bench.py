"""``spatialclaw bench``: run a benchmark (or the paper's suite of 20) with a model into run directories (parallel, resumable)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run a benchmark (parallel, resumable) and write RUN/results.jsonl",
        description="Run a benchmark: one episode per task, results in RUN/results.jsonl, trajectories in RUN/episodes/. "
        "Benchmarks: see --list (each with its source, splits and metric), local (with --source FILE.jsonl) or a "
        "path to a .jsonl task file. --suite paper runs the paper's 20 benchmarks, each into OUT/<name>, reading "
        "ROOT/<Folder> (--source-root ROOT, as `spatialclaw data download paper --root ROOT` leaves it), and "
        "prints the paper's table.",
    )
    parser.add_argument(
        "--list", action=_ListBenchmarks, help="print every benchmark with its source, splits and metric, and exit"
    )
    parser.add_argument(
        "--benchmark",
        default=None,
        help="benchmark name (ours, the paper's, or one from --include-path or an installed package), a .jsonl "
        "task file, or a .py file of yours defining SPEC (a BenchmarkSpec; docs/benchmarks.md)",
    )
    parser.add_argument(
        "--include-path",
        action=_IncludePath,
        metavar="DIR",
        help="a folder of your own benchmark spec modules (each *.py defining SPEC or SPECS): their names join "
        "--benchmark and --list (give it before --list); repeatable",
    )
    parser.add_argument("--suite", choices=["paper"], default=None, help="run the paper's 20 benchmarks")
    parser.add_argument(
        "--source-root", default=None, metavar="ROOT", help="--suite: the data root holding each benchmark's folder"
    )
    parser.add_argument(
        "--model",
        required=True,
        help="model spec, e.g. openai:gpt-4.1 or openai-compat:MODEL@http://host:8000/v1; keyless: "
        "scripted:look-and-answer, scripted:solve-synthetic (measures the synthetic scenes with the kernel's "
        "tools, most answers right), scripted:replies=FILE",
    )
    parser.add_argument("--out", required=True, help="run directory")
    parser.add_argument(
        "--limit",
        type=_positive,
        default=None,
        help="run the first N tasks, N >= 1 (synthetic: generate N), or a fraction F in (0, 1) of the tasks, "
        "evenly spaced (0.1: every tenth)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="synthetic: scene seed; datasets: shuffle with this seed, then take --limit "
        "(--seed 42 --limit N is the paper's --subsample N; 0 keeps dataset order)",
    )
    parser.add_argument(
        "--source",
        default=None,
        help="local copy of the dataset instead of the hub: the folder `hf download --repo-type dataset REPO "
        "--local-dir DIR` (or `spatialclaw data download`) wrote, media included, or a records file",
    )
    parser.add_argument(
        "--media-root", default=None, help="folder with the benchmark's videos/images when they are not under --source"
    )
    parser.add_argument("--fps", type=float, default=None, help="sample videos at F fps (default: the benchmark's)")
    parser.add_argument(
        "--key-frames", type=int, default=None, help="frames shown with the question per video/image set (default 32)"
    )
    parser.add_argument(
        "--long-side", type=int, default=None, metavar="PX", help="long side of the shown frames (default 768)"
    )
    parser.add_argument(
        "--scoring",
        choices=["reference", "lenient"],
        default=None,
        help="reference: the text given to answer() through the benchmark's own extractor, quirks included (the "
        "default for the paper's 20); lenient: option letters and texts read as the letter first (the default "
        "for the others); every results row records which",
    )
    parser.add_argument(
        "--kernel-frames",
        choices=["aspect_fit", "full"],
        default="aspect_fit",
        help="the paper's 20: the kernel holds the frames cropped and resized as shown (aspect_fit, the paper's "
        "setting) or at full resolution",
    )
    parser.add_argument("--split", default=None, help="dataset split (default: the benchmark's evaluation split)")
    parser.add_argument("--workers", type=int, default=1, help="episodes in parallel (default 1)")
    parser.add_argument("--resume", action="store_true", help="continue RUN: retry errored/timed-out and missing tasks")
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="K episodes per task, one row each; the report takes the mean over them (default 1, or the run's)",
    )
    parser.add_argument("--no-cache", action="store_true", help="do not answer repeated model requests from RUN/cache/")
    parser.add_argument(
        "--interface",
        choices=["no-tools", "single-pass", "tool-calls", "code"],
        default=None,
        help="how the model acts: no-tools (answers from the frames), single-pass (one cell written "
        "blind, then an answer from its output), tool-calls (primitives as structured function calls), "
        "code (one cell per step, the default)",
    )
    parser.add_argument("--baseline", choices=["no-tools"], default=None, help="the same as --interface no-tools")
    parser.add_argument(
        "--executor", choices=["local", "ray"], default="local", help="local threads (default) or a Ray cluster"
    )
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local Ray instance)")
    parser.add_argument(
        "--episode-timeout",
        type=float,
        default=None,
        help="end an episode after this many seconds with status timeout (local: the agent's time limit; "
        "Ray: its actor is killed); --resume retries it",
    )
    parser.add_argument(
        "--ray-gpus-per-worker",
        type=float,
        default=0.0,
        help="Ray executor: GPUs per worker (fractions share a GPU between episodes)",
    )
    parser.add_argument(
        "--perception-actors",
        type=int,
        default=0,
        metavar="N",
        help="Ray executor: run depth/detect/segment models on N shared actors instead of in each kernel",
    )
    parser.add_argument(
        "--perception-gpus",
        type=float,
        default=1.0,
        metavar="G",
        help="GPUs per perception actor (default 1; 0 runs the models on CPUs)",
    )
    parser.add_argument(
        "--service",
        action="append",
        default=[],
        metavar="NAME=DIR[,gpus=G]",
        help="Ray executor: run backend NAME (da3) as a Ray actor from its own environment DIR (prepared by "
        "`spatialclaw serve NAME --env DIR --ray`) with G GPUs (default 1; also cpus=C, model=ID, restarts=N, "
        "default 3); kernels reach it through their host's relay; repeatable",
    )
    parser.add_argument("--max-steps", type=int, default=None, help="agent step budget (default: the agent's)")
    from spatialclaw.commands.run import add_sandbox_option

    add_sandbox_option(parser)
    parser.add_argument(
        "--model-retries", type=int, default=None, help="attempts per model request (default: the backend's)"
    )
    parser.add_argument(
        "--agent-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any AgentConfig field, typed as the field (e.g. preview_images=4, fsync=false, "
        "limits='{\"time_s\": 60}'); repeatable",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sampling temperature of every model call (default: 0 for a new run; a resume keeps the run's)",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="completion tokens per model call (default: the provider's)",
    )
    parser.add_argument(
        "--model-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a provider-specific generation option sent with every call, VALUE as JSON when it parses "
        "(e.g. seed=7, top_p=0.9, 'extra_body={\"top_k\": 20}' for an OpenAI-compatible server); repeatable",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--config",
        action=_ConfigFile,
        metavar="FILE",
        help='read options from a TOML file: keys are these flags without dashes (model = "...", limit = 0.1, '
        "[max-concurrency] openai = 4); flags given override it; the run keeps what it ran with in RUN/config.toml",
    )
    parser.add_argument(
        "--max-concurrency",
        action="append",
        default=[],
        metavar="PROVIDER=N",
        help="at most N model requests in flight to PROVIDER (openai, anthropic, openai-compat) at once, shared "
        "by every worker of the process (the judge's included); repeatable",
    )
    parser.add_argument(
        "--rate-limit",
        action="append",
        default=[],
        metavar="PROVIDER=N/UNIT",
        help="at most N model requests per s, min or hour to PROVIDER, spaced evenly (e.g. openai=60/min); repeatable",
    )
    parser.add_argument(
        "--judge",
        default=None,
        metavar="MODEL",
        help="model spec of a judge for the rows the benchmark's rules leave to an LLM judge (SpatialTree-Bench's "
        "gpteval questions, 3DSRBench replies no rule matches); off by default; verdicts kept in RUN/judge/",
    )
    parser.set_defaults(handler=handle)


class _ConfigFile(argparse.Action):
    """``--config FILE``: the file's options into the namespace where no flag set them before it (flags after
    it override it; a repeatable flag's items follow the file's), before the required options are checked."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from spatialclaw.runner.config_file import config_argv, read_config

        try:
            argv = config_argv(read_config(str(values)), parser, str(values))
        except (OSError, ValueError) as error:
            parser.error(f"--config: {error}")
        required = [action for action in parser._actions if action.required]
        for action in required:  # the file alone need not be a whole command line
            action.required = False
        try:
            given = parser.parse_args(argv)
        finally:
            for action in required:
                action.required = True
        named = {action.dest for action in parser._actions if set(action.option_strings) & set(argv)}
        for action in parser._actions:
            if action.dest not in named:
                continue
            now = getattr(namespace, action.dest, None)
            if isinstance(action, argparse._AppendAction):
                setattr(namespace, action.dest, [*getattr(given, action.dest), *(now or [])])
            elif now == parser.get_default(action.dest):
                setattr(namespace, action.dest, getattr(given, action.dest))
            action.required = False  # the file gave it
        namespace.config = str(values)


class _IncludePath(argparse.Action):
    """``--include-path DIR``: DIR joins ``SPATIALCLAW_BENCHMARK_PATH`` at once (a later ``--list`` lists its
    specs; workers inherit it)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from spatialclaw.benchmarks.external import include_path

        try:
            include_path(str(values))
        except FileNotFoundError as error:
            parser.error(str(error))
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), str(values)])


class _ListBenchmarks(argparse.Action):
    """``--list``: print the benchmark table and exit before the required options are checked."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from spatialclaw.benchmarks.registry import benchmark_table

        try:
            print(benchmark_table())
        except ValueError as error:  # a spec file of yours that does not import: its file and line
            parser.exit(2, f"spatialclaw bench: {error}\n")
        parser.exit()


def _agent_options(args: argparse.Namespace) -> dict[str, Any]:
    from spatialclaw.runner.options import parse_agent_options

    options = parse_agent_options(args.agent_option)
    if args.max_steps is not None:
        options["max_steps"] = args.max_steps
    if args.sandbox != "auto":  # recorded in the run's identity only when chosen (older runs resume unchanged)
        options["sandbox"] = args.sandbox
    return options


def _positive(text: str) -> int | float:
    """``--limit``'s value: a whole number of tasks, at least 1 (0 would silently mean all of them), or a
    fraction of them between 0 and 1."""
    try:
        value = int(text)
    except ValueError:
        try:
            fraction = float(text)
        except ValueError:
            fraction = -1.0
        if 0 < fraction < 1:
            return fraction
        raise argparse.ArgumentTypeError(
            f"--limit takes a whole number of tasks or a fraction between 0 and 1, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--limit must be at least 1 (leave it out to run every task), got {value}")
    return value


def _check_setup(args: argparse.Namespace) -> None:
    """Fail before any episode when an ``--agent-option`` does not fit its field, ``--resume`` names no run, or
    the model spec is malformed or names an API model without a key (an ``hf:`` model is left to the workers:
    checking it means loading the weights)."""
    from spatialclaw.benchmarks.registry import benchmark_names
    from spatialclaw.models import load_model, parse_spec
    from spatialclaw.runner.lock import LOCK_NAME
    from spatialclaw.trajectories.run_dir import RunDir

    _agent_options(args)  # the command line's own values first, then the environment (an API key)
    out = Path(args.out)
    if args.resume and out.exists() and any(p.name != LOCK_NAME for p in out.iterdir()) and not RunDir(out).exists():
        # a missing folder starts a new run (so one job script can start and continue a run); a folder that
        # holds something else is never written into
        raise FileNotFoundError(
            f"{out} holds files but is not a run to resume (no manifest.json); choose another --out"
        )
    backend = parse_spec(args.model)[0]
    known = args.benchmark in benchmark_names() or args.benchmark.endswith(
        (".jsonl", ".py")
    )  # else the runner names it first
    if known and backend in ("openai", "anthropic", "openai-compat"):
        load_model(args.model).close()


def _generation(args: argparse.Namespace) -> dict[str, Any] | None:
    """The generation settings given on the command line, or None when none is (the run's or the default)."""
    import json

    given: dict[str, Any] = {}
    for item in args.model_option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--model-option needs KEY=VALUE, got {item!r}")
        try:
            given[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            given[key.strip()] = value
    if args.temperature is not None:
        given["temperature"] = args.temperature
    if args.max_tokens is not None:
        if args.max_tokens < 1:
            raise ValueError(f"--max-tokens must be at least 1, got {args.max_tokens}")
        given["max_tokens"] = args.max_tokens
    return given or None


def _frames(args: argparse.Namespace) -> dict[str, Any]:
    given = {"fps": args.fps, "key_frames": args.key_frames, "long_side": args.long_side}
    return {k: v for k, v in given.items() if v is not None}


def _config(args: argparse.Namespace, benchmark: str, out: str | Path, source: str | None) -> Any:
    from spatialclaw.models.throttle import parse_provider_limits
    from spatialclaw.runner import RunConfig
    from spatialclaw.services.ray_services import parse_service_option

    model_options = {"max_attempts": args.model_retries} if args.model_retries is not None else {}
    return RunConfig(
        benchmark=benchmark,
        model=args.model,
        out=Path(out),
        limit=args.limit,
        seed=args.seed,
        source=source,
        media_root=args.media_root,
        split=args.split,
        workers=args.workers,
        baseline=args.baseline,
        interface=args.interface or ("no-tools" if args.baseline else "code"),
        executor=args.executor,
        ray_address=args.ray_address,
        resume=args.resume,
        agent=_agent_options(args),
        model_options=model_options,
        episode_timeout_s=args.episode_timeout,
        ray_gpus_per_worker=args.ray_gpus_per_worker,
        perception_actors=args.perception_actors,
        perception_gpus=args.perception_gpus,
        services=[parse_service_option(text) for text in args.service],
        progress=not args.no_progress,
        frames=_frames(args),
        generation=_generation(args),
        repeats=args.repeats,
        cache=not args.no_cache,
        provider_limits=parse_provider_limits(args.max_concurrency, args.rate_limit),
        judge=args.judge,
        command_config=_effective(args),
        scoring=args.scoring,
        kernel_frames=args.kernel_frames,
    )


def _effective(args: argparse.Namespace) -> dict[str, Any]:
    """Every option this command runs with (defaults included), for ``RUN/config.toml`` and the manifest."""
    from spatialclaw.runner.config_file import effective_options

    root = argparse.ArgumentParser(add_help=False)
    commands = root.add_subparsers()
    register(commands)
    return effective_options(args, commands.choices["bench"])


def _failures() -> tuple[type[BaseException], ...]:
    from spatialclaw.benchmarks.spec import DatasetUnavailable
    from spatialclaw.models import ModelError
    from spatialclaw.runner.lock import RunLockedError
    from spatialclaw.services.toolshed import ServiceError

    return (
        FileExistsError,
        FileNotFoundError,
        ValueError,
        DatasetUnavailable,
        ModelError,
        RunLockedError,
        ServiceError,
    )


def handle(args: argparse.Namespace) -> int:
    from spatialclaw.runner import run_benchmark

    if (args.suite is None) == (args.benchmark is None):
        print("spatialclaw bench: give --benchmark NAME or --suite paper", file=sys.stderr)
        return 2
    for option in ("source", "source_root", "media_root"):  # relative paths: from the current directory, once
        if getattr(args, option, None):
            setattr(args, option, str(Path(getattr(args, option)).expanduser().absolute()))
    if args.suite:
        return _run_suite(args)
    try:
        _check_setup(args)
        summary = run_benchmark(_config(args, args.benchmark, args.out, args.source))
    except _failures() as failure:
        print(f"spatialclaw bench: {failure}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"spatialclaw bench: interrupted; every finished episode has its row in {args.out}/results.jsonl, "
            "and the same command with --resume runs the rest",
            file=sys.stderr,
        )
        return 130
    return _print_summary(summary)


def _run_suite(args: argparse.Namespace) -> int:
    """Each paper benchmark into OUT/<paper name>, from ROOT/<Folder>; then the paper's table."""
    from spatialclaw.benchmarks.paper_setting import PAPER_FOLDERS, paper_specs
    from spatialclaw.runner import run_benchmark
    from spatialclaw.runner.paper_report import paper_table

    if args.source or args.media_root:
        print("spatialclaw bench: --suite reads ROOT/<Folder> per benchmark; give --source-root ROOT", file=sys.stderr)
        return 2
    if not args.source_root:  # each benchmark would quietly load from the hub instead of the paper's data
        print(
            "spatialclaw bench: --suite paper needs --source-root ROOT, the folder `spatialclaw data download paper "
            "--root ROOT` fills (each benchmark reads ROOT/<Folder>)",
            file=sys.stderr,
        )
        return 2
    worst = 0
    for spec in paper_specs():
        name = spec.paper_name or spec.name
        source = str(Path(args.source_root) / PAPER_FOLDERS.get(name, spec.name))
        one = argparse.Namespace(**{**vars(args), "benchmark": spec.name, "out": str(Path(args.out) / name)})
        try:
            _check_setup(one)
            worst = max(worst, _print_summary(run_benchmark(_config(one, spec.name, one.out, source))))
        except _failures() as failure:
            print(f"spatialclaw bench: {name}: {failure}", file=sys.stderr)
            worst = 2
    print(paper_table([args.out]))
    return worst


def _print_summary(summary: Any) -> int:
    for problem in summary.unreadable:
        print(f"spatialclaw bench: {problem}", file=sys.stderr)
    agg = summary.aggregate
    overall = "n/a" if agg.overall is None else f"{100 * agg.overall:.1f}%"
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items()))
    print(
        f"{summary.run_dir}: ran {summary.ran}, kept {summary.kept}; {statuses}; overall {overall} ({agg.rule}, n={agg.n}) "
        f"in {summary.duration_s:.1f} s"
    )
    if summary.missing_media:
        print(f"{summary.missing_media} task(s) ran without media files that are missing (see their meta)")
    unfinished = summary.statuses.get("error", 0) + summary.statuses.get("timeout", 0)
    if unfinished:
        print(f"{unfinished} task(s) failed; run again with --resume to retry them", file=sys.stderr)
        return 3
    return 0
