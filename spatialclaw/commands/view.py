"""``spatialclaw view``: self-contained HTML pages for an episode or a run."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "view",
        help="write HTML pages (images inlined) for an episode or a run, and print the path to open",
        description="For a run directory (from `spatialclaw bench`): one self-contained page, RUN/index.html, "
        "with filter/sort/search over its tasks and every attempt's messages and cells. For an episode directory "
        "(or a folder of episodes): a page per episode and an index.html, or everything under --out. Opens in any "
        "browser without a server.",
    )
    parser.add_argument("path", metavar="RUN_OR_EPISODE", help="an episode directory or a run directory")
    parser.add_argument("--out", help="directory (or .html file for one episode) to write to instead")
    parser.add_argument(
        "--live",
        action="store_true",
        help="a run in progress: serve its page on 127.0.0.1 (printed), read anew on every refresh, with its "
        "progress, until Ctrl-C; writes nothing",
    )
    parser.add_argument("--refresh", type=float, default=5.0, metavar="S", help="--live: refresh every S seconds")
    parser.set_defaults(handler=run)


def _live(args: argparse.Namespace) -> int:
    import time

    from spatialclaw.trajectories.live_view import LiveRunView

    with LiveRunView(args.path, args.refresh) as view:
        print(f"serving {args.path} live at {view.url} (Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


def run(args: argparse.Namespace) -> int:
    from spatialclaw.trajectories.episode_viewer import write_views
    from spatialclaw.trajectories.run_viewer import is_run_dir, write_run_page
    from spatialclaw.trajectories.safe_files import UnsafeTarget

    try:
        if args.live:
            if not is_run_dir(args.path):
                raise FileNotFoundError(
                    f"{args.path} is not a run directory; --live follows a run of `spatialclaw bench`"
                )
            return _live(args)
        if is_run_dir(args.path):
            print(write_run_page(args.path, args.out))
            return 0
        result = write_views(args.path, args.out)
    except (FileNotFoundError, ValueError, UnsafeTarget) as error:
        print(f"spatialclaw view: {error}", file=sys.stderr)
        return 2
    for problem in result.problems:
        print(f"spatialclaw view: {problem}", file=sys.stderr)
    print(result.main)
    return 0
