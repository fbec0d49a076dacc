"""Lazily imported classes for the kernel namespace: the result types the manual names (``Frame``,
``Rectified``, ``Perspective``, ...) are usable by name in a cell (``Frame.from_image(img)``,
``isinstance(x, Blob)``, ``help(Zoom)``) without importing their modules at kernel start."""

from __future__ import annotations

import importlib
from typing import Any, cast

__all__ = ["LazyType"]


class LazyType:
    """Stands for the class ``module:attribute``, imported on first use; attribute access, calls and
    ``isinstance``/``issubclass`` checks behave as with the class itself."""

    def __init__(self, module: str, attribute: str) -> None:
        object.__setattr__(self, "_lazy_module", module)
        object.__setattr__(self, "_lazy_attribute", attribute)
        object.__setattr__(self, "_lazy_class", None)

    def _load(self) -> type:
        cls = object.__getattribute__(self, "_lazy_class")
        if cls is None:
            module = importlib.import_module(object.__getattribute__(self, "_lazy_module"))
            cls = getattr(module, object.__getattribute__(self, "_lazy_attribute"))
            object.__setattr__(self, "_lazy_class", cls)
        return cast(type, cls)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._load(), attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._load()(*args, **kwargs)

    def __instancecheck__(self, instance: Any) -> bool:
        return isinstance(instance, self._load())

    def __subclasscheck__(self, subclass: type) -> bool:
        return issubclass(subclass, self._load())

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type]:
        return (self._load(),)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return self._load().__doc__

    @property
    def __wrapped__(self) -> type:
        return self._load()

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __eq__(self, other: Any) -> bool:
        return self._load() is (other._load() if isinstance(other, LazyType) else other)

    def __hash__(self) -> int:
        return hash(self._load())

    def __repr__(self) -> str:
        return (
            f"<class {object.__getattribute__(self, '_lazy_attribute')} from "
            f"{object.__getattribute__(self, '_lazy_module')}>"
        )

    def __reduce__(self) -> Any:
        return (
            getattr,
            (
                importlib.import_module(object.__getattribute__(self, "_lazy_module")),
                object.__getattribute__(self, "_lazy_attribute"),
            ),
        )
