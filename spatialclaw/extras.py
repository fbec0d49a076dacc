"""Optional dependencies and the extra that installs each: the one place that turns an ImportError of an
optional package into "install spatialclaw[EXTRA]".

:data:`EXTRAS` mirrors ``[project.optional-dependencies]`` in ``pyproject.toml`` (a test keeps them
equal), by the module name each package is imported as. The CLI calls :func:`install_hint` on any
error that ends a command: a missing optional module becomes one line naming the extra to install,
instead of a traceback.
"""

from __future__ import annotations

__all__ = ["EXTRAS", "install_hint", "missing_module"]

#: Importable module name -> (distribution name, extra). ``dev`` holds test tools only and is left out.
EXTRAS: dict[str, tuple[str, str]] = {
    "torch": ("torch", "perception"),
    "transformers": ("transformers", "perception"),
    "accelerate": ("accelerate", "perception"),
    "safetensors": ("safetensors", "perception"),
    "datasets": ("datasets", "data"),
    "ray": ("ray", "ray"),
}


def missing_module(error: BaseException) -> str | None:
    """The top-level name of the module an ImportError (or one it was raised from) could not import."""
    seen = 0
    while error is not None and seen < 5:
        if isinstance(error, ImportError) and getattr(error, "name", None):
            return str(error.name).split(".")[0]
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
        seen += 1
    return None


def install_hint(error: BaseException) -> str | None:
    """One line saying which extra to install when ``error`` comes from a missing optional package, else None."""
    module = missing_module(error)
    if module not in EXTRAS:
        return None
    distribution, extra = EXTRAS[module]
    return (
        f"this needs the optional package {distribution!r}, which is not installed: pip install 'spatialclaw[{extra}]'"
    )
