"""Lazy stand-ins for namespace entries, so that a kernel starts in about a second and heavy modules
(SciPy submodules, matplotlib, torch, Open3D, models) load only when a cell first uses them."""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable
from typing import Any


class LazyModule:
    """A module imported on first attribute access (``plt.plot`` imports ``matplotlib.pyplot``)."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_lazy_name", name)
        object.__setattr__(self, "_lazy_module", None)

    def _load(self) -> Any:
        module = object.__getattribute__(self, "_lazy_module")
        if module is None:
            module = importlib.import_module(object.__getattribute__(self, "_lazy_name"))
            object.__setattr__(self, "_lazy_module", module)
        return module

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._load(), attribute)

    def __setattr__(self, attribute: str, value: Any) -> None:
        setattr(self._load(), attribute, value)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        return f"<module {object.__getattribute__(self, '_lazy_name')!r} (loaded on first use)>"

    def __reduce__(self) -> Any:
        return (importlib.import_module, (object.__getattribute__(self, "_lazy_name"),))


class LazyCallable:
    """A function imported from ``module:attribute`` on first call; ``help()`` shows the real docstring."""

    def __init__(self, module: str, attribute: str) -> None:
        self._module = module
        self._attribute = attribute
        self._target: Callable[..., Any] | None = None

    def _load(self) -> Callable[..., Any]:
        if self._target is None:
            self._target = getattr(importlib.import_module(self._module), self._attribute)
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._load()(*args, **kwargs)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_lazy") or attribute in {"_module", "_attribute", "_target"}:
            raise AttributeError(attribute)
        return getattr(self._load(), attribute)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return self._load().__doc__

    @property
    def __wrapped__(self) -> Callable[..., Any]:
        return self._load()

    def __repr__(self) -> str:
        return f"<function {self._attribute} from {self._module}>"


#: What a lazy instance does to its object for each special method (Python looks special methods up on the
#: type, so ``__getattr__`` never sees ``scene["chair"]``, ``"chair" in scene``, ``len(scene)``, ...).
FORWARDED: dict[str, Callable[..., Any]] = {
    "__getitem__": operator.getitem,
    "__setitem__": operator.setitem,
    "__delitem__": operator.delitem,
    "__contains__": lambda target, key: key in target,
    "__len__": len,
    "__iter__": iter,
    "__reversed__": reversed,
    "__bool__": bool,
    "__enter__": lambda target: type(target).__enter__(target),
    "__exit__": lambda target, *exc: type(target).__exit__(target, *exc),
}


def _forward(name: str) -> Callable[..., Any]:
    """The special method ``name`` of ``LazyInstance``: build the object, then do the same to it."""

    def method(self: LazyInstance, *args: Any) -> Any:
        return FORWARDED[name](self._load(), *args)

    method.__name__ = name
    method.__doc__ = f"``{name}`` of the object (built on first use)."
    return method


class LazyInstance:
    """An object built by ``factory()`` on first attribute access (``scene.add(...)`` creates the Scene);
    indexing, ``in``, ``len``, iteration, truth and ``with`` reach the object too (``FORWARDED``)."""

    def __init__(self, factory: Callable[[], Any], description: str) -> None:
        object.__setattr__(self, "_lazy_factory", factory)
        object.__setattr__(self, "_lazy_description", description)
        object.__setattr__(self, "_lazy_object", None)

    def _load(self) -> Any:
        target = object.__getattribute__(self, "_lazy_object")
        if target is None:
            target = object.__getattribute__(self, "_lazy_factory")()
            object.__setattr__(self, "_lazy_object", target)
        return target

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._load(), attribute)

    def __setattr__(self, attribute: str, value: Any) -> None:
        setattr(self._load(), attribute, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._load()(*args, **kwargs)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        target = object.__getattribute__(self, "_lazy_object")
        return (
            repr(target)
            if target is not None
            else f"<{object.__getattribute__(self, '_lazy_description')} (created on first use)>"
        )

    def __reduce__(self) -> Any:
        return (_identity, (self._load(),))


for _name in FORWARDED:
    setattr(LazyInstance, _name, _forward(_name))


def _identity(value: Any) -> Any:
    return value
