"""The ``tool-calls`` interface: the kernel's primitives as structured function calls with JSON results.

:func:`tool_specs` turns the kernel namespace's functions (``depth``, ``detect``, ``zoom``, ...), the
``geom`` module's functions (``geom_distance``, ...) and the methods of ``frames`` and ``scene``
(``frames_at``, ``scene_add``, ...) into tool definitions: the JSON schema of each comes from the
signature (JSON types where the annotation names one; kernel objects by reference) and the
description from the first paragraph of the docstring, so the tools cannot drift from the primitives.
``answer`` is a tool too; calling it ends the episode.

Each call runs in the episode's kernel as one cell: ``_sc_tool_call(path, arguments_json, ref)``, a
helper defined at the start of the episode. It resolves reference strings in the arguments
(``"$frames[0]"``, ``"$videos[1][3]"``, ``"$r2"`` for the result of call 2, ``"$r2.boxes[0]"``), calls
the function, keeps the result in the kernel as ``rN`` and prints it as JSON: numbers, strings, lists
and dicts as themselves, NumPy arrays up to 64 values as lists (larger ones as shape, dtype and range),
dataclass results field by field, anything else as its type, ``repr`` and reference. Images a call
shows (``show``, ``zoom``, ``draw``) come back attached to the tool result. The model sees a tool result
as the JSON text (or ``{"error": ...}``) plus those images, in its provider's tool-result format.

A reply with no tool call ends the episode with the answer parsed from its text (``ANSWER: ...``;
source ``text``); a reply with neither a call nor a readable answer is a format error (``max_format_errors``
in a row end the episode). After ``max_steps`` replies the model is asked once for a direct answer
(status ``budget``, source ``fallback``), as in the code interface.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import re
from collections.abc import Iterable
from typing import Any

from spatialclaw.agent.context import fit_image
from spatialclaw.agent.direct_answer import parse_direct_answer
from spatialclaw.agent.prompting import answer_rules, task_prompt
from spatialclaw.agent.task_inputs import preview_frames
from spatialclaw.chat import Message, TextPart, ToolSpec
from spatialclaw.runner.kernel_episode import EpisodeContext, KernelInterface

__all__ = ["SYSTEM", "TOOL_HELPER", "ToolCallAgent", "tool_specs"]

_SKIP = {
    "vlm",
    "meta",
    "show",
}  # vlm needs the side channel; meta is data (in the task text); show needs an image reference
_JSON_TYPES = {
    "int": "integer",
    "float": "number",
    "str": "string",
    "bool": "boolean",
    "None": "null",
    "os.PathLike": "string",
    "Path": "string",
}

SYSTEM = """You answer a question about images or video frames by calling tools. The tools are functions of \
a Python kernel that holds the question's frames (`frames`; with several inputs, `videos[i]`) and \
perception and geometry primitives. Arguments are JSON. To pass a kernel object, give a reference \
string: "$frames[0]" (frame 0), "$videos[1][2]", "$r3" (the result of your call number 3, shown as \
"ref" in its result), or an attribute or item of one, "$r3.boxes[0]". Every result comes back as JSON \
(objects that are not plain data as their type, a short repr and their ref); images the call makes are \
attached to it. Call several tools in one reply when they do not depend on each other. When you know \
the answer, call answer(value). Units: metres, pixels, degrees, seconds, as each tool's description says.

$answer_rules
"""
FORMAT_ERROR = (
    "Your reply called no tool and held no `ANSWER: ...` line. Call a tool, or call answer(value) "
    "when you know the answer."
)
FALLBACK = (
    "You have used all {steps} steps. Answer now from what the tools returned, without calling a tool: "
    "end your reply with a line `ANSWER: <your answer>`."
)

#: Defined in the kernel at the start of every tool-calls episode (its names start with ``_sc_``).
TOOL_HELPER = r"""
def _sc_tool_call(_sc_path, _sc_arguments, _sc_ref):
    import dataclasses as _sc_dc, json as _sc_json, re as _sc_re
    _sc_ns = globals()
    _sc_pattern = _sc_re.compile(r"^\$([A-Za-z_]\w*)((?:\[-?\d+\]|\.[A-Za-z_]\w*)*)$")

    def _sc_resolve(value):
        if isinstance(value, str):
            match = _sc_pattern.match(value)
            if not match:
                return value
            if match.group(1) not in _sc_ns:
                raise NameError(f"reference {value!r}: the kernel has no {match.group(1)!r}")
            obj = _sc_ns[match.group(1)]
            for index, attribute in _sc_re.findall(r"\[(-?\d+)\]|\.([A-Za-z_]\w*)", match.group(2)):
                if attribute.startswith("_"):
                    raise AttributeError(f"reference {value!r}: private attributes cannot be referenced")
                obj = obj[int(index)] if attribute == "" else getattr(obj, attribute)
            return obj
        if isinstance(value, list):
            return [_sc_resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: _sc_resolve(v) for k, v in value.items()}
        return value

    def _sc_json_value(value, ref, depth=0):
        import numpy as np
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            if value.size <= 64:
                return value.tolist()
            summary = {"type": "ndarray", "shape": list(value.shape), "dtype": str(value.dtype), "ref": ref}
            if value.dtype.kind in "biuf" and value.size:
                finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
                if finite.size:
                    summary.update(min=float(finite.min()), max=float(finite.max()))
            return summary
        if depth < 3 and isinstance(value, (list, tuple)) and len(value) <= 50:
            return [_sc_json_value(v, f"{ref}[{i}]", depth + 1) for i, v in enumerate(value)]
        if depth < 3 and isinstance(value, dict) and len(value) <= 50:
            return {str(k): _sc_json_value(v, f"{ref}.{k}", depth + 1) for k, v in value.items()}
        if depth < 3 and _sc_dc.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: _sc_json_value(getattr(value, f.name), f"{ref}.{f.name}", depth + 1)
                      for f in _sc_dc.fields(value) if not f.name.startswith("_")}
            return {"type": type(value).__name__, "ref": ref, **fields}
        return {"type": type(value).__name__, "repr": repr(value)[:500], "ref": ref}

    target = _sc_ns
    for number, part in enumerate(_sc_path.split(".")):
        target = target[part] if number == 0 else getattr(target, part)
    arguments = _sc_resolve(_sc_json.loads(_sc_arguments))
    result = target(**arguments)
    _sc_ns[_sc_ref.lstrip("$")] = result
    try:
        from PIL import Image as _sc_image
        if isinstance(result, _sc_image.Image):
            show(result)
    except ImportError:
        pass
    print(_sc_json.dumps({"result": _sc_json_value(result, _sc_ref)}, default=repr))
"""


def _json_schema(annotation: Any) -> dict[str, Any]:
    """A JSON-schema fragment for an annotation (a type or its text): JSON types where every
    alternative names one, else no type constraint (a kernel object, passed by reference)."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    text = text.replace("typing.", "")
    if not text or text == "Any":
        return {"description": 'any JSON value or a kernel reference such as "$frames[0]"'}
    alternatives = [a.strip() for a in text.split("|")]
    types = []
    for alternative in alternatives:
        head = alternative.split("[", 1)[0]
        if head == "Literal":
            try:
                values = list(ast.literal_eval("[" + alternative[len("Literal[") : -1] + "]"))
            except (ValueError, SyntaxError):
                return {"description": text}
            return {"enum": values, "description": text}
        if alternative in _JSON_TYPES:
            types.append(_JSON_TYPES[alternative])
        elif head in ("list", "tuple", "Sequence"):
            types.append("array")
        elif head in ("dict", "Mapping"):
            types.append("object")
        else:
            return {"description": f'{text} (a kernel object: pass a reference such as "$frames[0]" or "$r1")'}
    unique = list(dict.fromkeys(types))
    schema: dict[str, Any] = {"type": unique[0] if len(unique) == 1 else unique, "description": text}
    if "array" in unique:
        schema["items"] = {}
    return schema


def _function_tool(name: str, path: str, function: Any) -> ToolSpec | None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        schema = _json_schema(parameter.annotation if parameter.annotation is not parameter.empty else "Any")
        if parameter.default is parameter.empty:
            required.append(parameter.name)
        else:
            try:
                json.dumps(parameter.default)
                schema["default"] = parameter.default
            except (TypeError, ValueError):
                pass
        properties[parameter.name] = schema
    from spatialclaw.agent.kernel_docs import _signature

    doc = (inspect.getdoc(function) or "(no description)").split("\n\n", 1)[0]
    description = f"{_signature(function, path)}: {doc}".replace("\n", " ")[:1024]
    return ToolSpec(name, description, {"type": "object", "properties": properties, "required": required})


@functools.lru_cache(maxsize=1)
def _tools() -> tuple[tuple[ToolSpec, str], ...]:
    from spatialclaw.agent.kernel_docs import _namespace_entries, _public_members

    tools: list[tuple[ToolSpec, str]] = []

    def add(name: str, path: str, function: Any) -> None:
        spec = _function_tool(name, path, function)
        if spec is not None:
            tools.append((spec, path))

    for name, module_name, attribute, binding in _namespace_entries():
        if name in _SKIP:
            continue
        try:
            module = importlib.import_module(module_name)
        except Exception:  # an uninstalled primitive is not offered
            continue
        if binding == "function":
            obj: Any = module
            for part in attribute.split("."):
                obj = getattr(obj, part)
            add(name, name, obj)
        elif binding == "module":
            for attr in getattr(module, "__all__", []):
                value = getattr(module, attr, None)
                if inspect.isfunction(value):
                    add(f"{name}_{attr}", f"{name}.{attr}", value)
        else:
            cls = getattr(module, attribute)
            for attr, member in _public_members(cls):
                if attr.startswith("_") or isinstance(member, property):
                    continue
                function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                add(f"{name}_{attr}", f"{name}.{attr}", function)
    return tuple(tools)


def tool_specs(
    primitives: dict[str, str] | None = None, path: Iterable[str] = ()
) -> tuple[list[ToolSpec], dict[str, str]]:
    """The tools offered to the model, and each tool's path in the kernel namespace by tool name.
    ``primitives`` are the kernel's own extra functions (``Kernel(primitives=...)``), offered after the
    built-in ones; each is imported here with the kernel's module ``path`` (``Kernel.primitive_path``), for
    its signature and docstring."""
    from spatialclaw.kernel.own_primitives import import_primitive
    from spatialclaw.primitives.runtime.namespace import parse_primitives

    tools = list(_tools())
    for name, (module, attribute) in parse_primitives(primitives).items():
        spec = _function_tool(name, name, import_primitive(module, attribute, path))
        if spec is not None:
            tools.append((spec, name))
    return [spec for spec, _ in tools], {spec.name: path for spec, path in tools}


def call_cell(path: str, arguments: dict[str, Any], ref: str) -> str:
    """The cell that runs one tool call (arguments as a JSON string literal: nothing the model sends is code)."""
    return f"_sc_tool_call({path!r}, {json.dumps(arguments)!r}, {ref!r})"


class ToolCallAgent(KernelInterface):
    """Episodes of the ``tool-calls`` interface (see the module docstring)."""

    interface = "tool-calls"
    prompt_version = "tool-calls-1"

    def play(self, episode: EpisodeContext) -> tuple[str, Any, str | None]:
        config, task = self.config, episode.task
        kernel = episode.kernel
        tools, paths = tool_specs(getattr(kernel, "primitives", None), getattr(kernel, "primitive_path", ()))
        setup = episode.kernel.execute(TOOL_HELPER, timeout=episode.clock.cap(60.0))
        if not setup.ok:
            raise RuntimeError(f"the tool-call helper did not load in the kernel: {setup.to_text(2000)}")
        images, preview_text = preview_frames(task, config.preview_images, config.preview_max_side)
        system = Message.text("system", SYSTEM.replace("$answer_rules", answer_rules(None)))
        messages = [system, Message("user", [TextPart(task_prompt(task, preview_text)), *images])]
        calls = 0
        format_errors = 0
        for step in range(1, config.max_steps + 1):
            episode.step = step
            reply = episode.call(messages, "step", tools=tools)
            messages.append(Message("assistant", [TextPart(reply.text)], tool_calls=list(reply.tool_calls)))
            if not reply.tool_calls:
                answer = (
                    parse_direct_answer(reply.text, task) if re.search(r"ANSWER\s*[:=]", reply.text, re.I) else None
                )
                if answer is not None:
                    return "answered", answer, "text"
                episode.writer.write("format_error", step=step, response=reply.text, message=FORMAT_ERROR)
                messages.append(Message.text("user", FORMAT_ERROR))
                format_errors += 1
                if format_errors >= config.max_format_errors:
                    return "format_errors", None, None
                continue
            format_errors = 0
            for call in reply.tool_calls:
                calls += 1
                ref = f"$r{calls}"
                if call.error is not None or call.name not in paths:
                    problem = call.error or f"there is no tool {call.name!r}"
                    messages.append(Message("tool", [TextPart(json.dumps({"error": problem}))], tool_call_id=call.id))
                    continue
                result = episode.execute(
                    call_cell(paths[call.name], call.arguments, ref),
                    tool_call={"id": call.id, "name": call.name, "arguments": call.arguments, "ref": ref},
                )
                if result.answered:
                    return "answered", result.answer, "tool"
                if result.error is not None or not result.ok:
                    content = json.dumps(
                        {
                            "error": result.error.to_text()
                            if result.error is not None
                            else f"cell status {result.status}",
                            **({"output": result.stdout[-2000:]} if result.stdout else {}),
                        }
                    )
                else:
                    content = _last_json_line(result.stdout) or json.dumps(
                        {"result": None, "output": result.stdout[-4000:]}
                    )
                content = content[: config.observation_chars]
                shown = [
                    fit_image(i.png, i.width, i.height, config.max_image_side, i.label or i.origin)
                    for i in result.images
                ]
                messages.append(Message("tool", [TextPart(content), *shown], tool_call_id=call.id))
        episode.step = config.max_steps
        from spatialclaw.agent.limits import LimitHit

        episode.limit = LimitHit("steps", config.max_steps, config.max_steps)
        if not config.fallback:
            return "budget", None, None
        reply = episode.call([*messages, Message.text("user", FALLBACK.format(steps=config.max_steps))], "fallback")
        return "budget", parse_direct_answer(reply.text, task), "fallback"


def _last_json_line(stdout: str) -> str | None:
    """The helper's JSON line (the last line of the output that parses; a tool may print before it)."""
    for line in reversed(stdout.strip().split("\n")):  # "\n" only: a JSON line holds no other line break
        try:
            json.loads(line)
        except ValueError:
            continue
        return line
    return None
