"""Every name of DESIGN.md's kernel namespace exists, resolves to real code and documents itself."""

from __future__ import annotations

import inspect

import pytest

from spatialclaw.primitives.runtime.lazy import LazyCallable, LazyInstance, LazyModule
from spatialclaw.primitives.runtime.namespace import NAMESPACE_NAMES, build_namespace

DESIGN_NAMES = {
    "frames",
    "videos",
    "meta",
    "show",
    "answer",
    "depth",
    "reconstruct",
    "detect",
    "segment",
    "track",
    "vlm",
    "geom",
    "scene",
}


def test_namespace_covers_design():
    namespace = build_namespace()
    assert set(namespace) >= DESIGN_NAMES
    assert set(NAMESPACE_NAMES) == set(namespace)


@pytest.mark.parametrize(
    "name", [n for n in NAMESPACE_NAMES if n not in {"frames", "videos", "meta", "np", "scipy", "Image"}]
)
def test_entry_resolves_to_documented_code(name):
    entry = build_namespace()[name]
    if isinstance(entry, (LazyCallable, LazyModule)):
        target = entry._load()
    elif isinstance(entry, LazyInstance):
        target = type(entry._load())
    else:
        target = entry
    doc = inspect.getdoc(
        target
        if not callable(target) or inspect.isroutine(target) or inspect.ismodule(target) or inspect.isclass(target)
        else type(target).__call__
    )
    assert doc and len(doc) > 40, f"{name} needs a docstring: it becomes the model's manual"


# ---- the manual names nothing the kernel lacks ---------------------------------------------------
def _kernel_namespace() -> dict:
    parameters = inspect.signature(build_namespace).parameters
    return build_namespace(check_tools=False) if "check_tools" in parameters else build_namespace()


def _resolve(value):
    """The object behind a lazy namespace entry."""
    loader = getattr(type(value), "_load", None)
    return loader(value) if loader is not None else value


def _member_names(namespace: dict) -> set[str]:
    """Every attribute name of the namespace's modules, classes and instances (methods named in prose)."""
    names: set[str] = set()
    for value in namespace.values():
        target = _resolve(value)
        names.update(dir(target))
        names.update(dir(type(target)))
        if inspect.ismodule(target) and target.__name__.startswith("spatialclaw"):
            for attr in getattr(target, "__all__", []):
                names.update(dir(getattr(target, attr, None)))
    return names


def missing_names(manual: str, namespace: dict) -> list[str]:
    """Names the manual shows in backticks that a cell could not use: a type (CapWords) or a function
    call ``name(...)`` not in the namespace nor builtins (calls may also be methods of namespace
    objects), and ``module.attr`` / ``Type.attr`` chains whose attribute does not exist."""
    import builtins
    import re

    members = _member_names(namespace)
    missing: list[str] = []
    for span in re.findall(r"`+([^`]+?)`+", manual):
        match = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\s*\()?", span)
        if not match or span.lstrip().startswith("."):
            continue
        head, chain, call = match.group(1), match.group(2), bool(match.group(3))
        if head in namespace:
            target = _resolve(namespace[head])
            if chain and (inspect.ismodule(target) or inspect.isclass(target)):
                for attr in chain.lstrip(".").split("."):
                    if not hasattr(target, attr):
                        missing.append(f"{head}{chain}")
                        break
                    target = getattr(target, attr)
            continue
        if hasattr(builtins, head) or head.isupper():  # builtins; ALL_CAPS constants are prose
            continue
        is_type = head[0].isupper()
        if is_type or (call and not chain and head not in members):
            missing.append(head)
    return sorted(set(missing))


def test_the_contract_check_catches_a_name_the_kernel_lacks():
    namespace = _kernel_namespace()
    manual = (
        "Use `Gizmo.make()` then `frobnicate(x)`; `geom.no_such_function(a)` too. Fine: `Frame.from_image(img)`, "
        "`scene.add(...)`, `.box`, `bev()`, `len(x)`, `ValueError`, `geom.rectify_plane(frame, quad, size)`."
    )
    assert missing_names(manual, namespace) == ["Gizmo", "frobnicate", "geom.no_such_function"]


def _details() -> tuple[str, ...]:
    from spatialclaw.agent import kernel_docs

    return tuple(getattr(kernel_docs, "API_DETAILS", ("full", "brief")))


@pytest.mark.parametrize("detail", _details())
def test_every_type_and_function_the_manual_shows_exists_in_the_kernel(detail):
    from spatialclaw.agent.kernel_docs import api_section

    missing = missing_names(api_section(detail), _kernel_namespace())
    assert not missing, (
        f"the {detail!r} manual names {missing}, which a cell cannot use: register them in "
        f"primitives/runtime/namespace.py (RESULT_TYPES for classes) or fix the docstring"
    )


def test_result_types_work_by_name_in_a_real_kernel(test_data):
    from spatialclaw import Kernel

    with Kernel(frames=[str(test_data / "rgbd-redwood" / "color" / "00000.jpg")]) as kernel:
        result = kernel.execute(
            "f = Frame.from_image(frames[0], index=7)\n"
            "print(f.index, isinstance(f, Frame), isinstance(find_color(f, 'white'), ColorBlobs))\n"
            "try:\n    raise AnswerError('x')\nexcept AnswerError:\n    print('caught')\n"
        )
        assert result.error is None, result.to_text(2000)
        assert result.stdout.split() == ["7", "True", "True", "caught"]


def test_a_lazy_type_behaves_like_its_class():
    import json

    from spatialclaw.primitives.runtime.lazy_type import LazyType

    decoder = LazyType("json", "JSONDecoder")
    assert object.__getattribute__(decoder, "_lazy_class") is None  # nothing imported yet
    instance = decoder()
    assert (
        isinstance(instance, decoder) and isinstance(instance, (int, decoder)) and issubclass(json.JSONDecoder, decoder)
    )
    assert decoder.decode is json.JSONDecoder.decode and decoder == json.JSONDecoder
    assert "JSON" in decoder.__doc__ and "JSONDecoder" in repr(decoder)

    class Sub(decoder):  # usable as a base class
        pass

    assert issubclass(Sub, json.JSONDecoder)
