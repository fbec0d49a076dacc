"""Whether a benchmark's records can be read through ``datasets`` right now, answered in seconds.

Two checks run before ``datasets.load_dataset``: the package is installed (else the ``data`` extra is
named: a missing package, not a network problem), and, for the hub, that it can be reached (one short
connection probe, shared with the weight loaders; else one line instead of half a minute of retries).
Each returns the problem as one line, or ``None``.
"""

from __future__ import annotations

__all__ = ["datasets_missing", "hub_problem"]


def datasets_missing(benchmark: str) -> str | None:
    """The line to show when ``datasets`` cannot be imported, else None."""
    try:
        import datasets  # noqa: F401
    except ImportError:
        return (
            f"{benchmark}: reading its records needs the optional package 'datasets', which is not installed: "
            "pip install 'spatialclaw[data]'"
        )
    return None


def hub_problem(benchmark: str, hub_id: str) -> str | None:
    """The line to show when the hub cannot be reached and offline mode was not asked for, else None.
    With ``HF_HUB_OFFLINE=1`` ``datasets`` reads its cache without network, so nothing is probed."""
    from spatialclaw.primitives.perception.models import hub_offline, hub_unavailable

    reason = None if hub_offline() else hub_unavailable()
    if reason is None:
        return None
    return (
        f"could not load {benchmark} from the Hugging Face hub ({hub_id}): {reason}. Set HF_HUB_OFFLINE=1 to "
        f"read it from a warm HF_HOME cache, or download it elsewhere (hf download --repo-type dataset {hub_id} "
        "--local-dir DIR) and pass --source DIR."
    )
