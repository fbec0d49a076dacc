"""``vlm``: side questions to the episode's vision-language model, from inside a cell.

``vlm.ask(images, question)`` returns the model's text answer. ``vlm.locate(image, description)``
returns the places where the model sees the described thing, parsed into pixel coordinates of that
image (x right, y down, origin top-left): never a raw string. The call travels to the host process over
a local HTTP channel (a Unix socket in a sandboxed kernel, which has no shared loopback); the kernel holds
no API key.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, cast

from spatialclaw.primitives.imaging import png_bytes

__all__ = ["Location", "VLMClient", "VLMError", "parse_locations"]


class VLMError(RuntimeError):
    """The side channel is not configured, the model call failed, or its reply could not be parsed."""


@dataclass(frozen=True)
class Location:
    """Where the model sees something, in pixels of the image it was given (origin top-left).

    ``box`` is (x0, y0, x1, y1) with x0 <= x1, y0 <= y1, or None for a point; ``point`` is (x, y):
    the box centre, or the point itself. ``label`` is the model's name for it.
    """

    point: tuple[float, float]
    box: tuple[float, float, float, float] | None = None
    label: str | None = None

    @property
    def center(self) -> tuple[float, float]:
        return self.point


def _numbers(value: Any) -> list[float] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [float(v) for v in value]
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (list, tuple)) for v in value):
        flat = [v for pair in value for v in pair]
        return _numbers(flat)
    return None


def _json_values(text: str) -> Any:
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, flags=re.DOTALL)
    candidates = [fenced.group(1)] if fenced else []
    start = min([i for i in (text.find("["), text.find("{")) if i >= 0], default=-1)
    if start >= 0:
        candidates.append(text[start:])
    for candidate in candidates:
        candidate = candidate.strip()
        for end in range(len(candidate), 0, -1):  # tolerate trailing prose after the JSON
            if candidate[end - 1] not in "]}":
                continue
            try:
                return json.loads(candidate[:end])
            except json.JSONDecodeError:
                continue
    return None


def _location(numbers: list[float], label: str | None, width: int, height: int) -> Location | None:
    if len(numbers) not in (2, 4):
        return None
    if all(0.0 <= n <= 1.0 for n in numbers) and max(numbers) > 0:  # normalised coordinates
        numbers = [n * (width if i % 2 == 0 else height) for i, n in enumerate(numbers)]
    clip = [min(max(n, 0.0), float(width if i % 2 == 0 else height)) for i, n in enumerate(numbers)]
    if len(clip) == 2:
        return Location(point=(clip[0], clip[1]), label=label)
    x0, x1 = sorted((clip[0], clip[2]))
    y0, y1 = sorted((clip[1], clip[3]))
    return Location(point=((x0 + x1) / 2, (y0 + y1) / 2), box=(x0, y0, x1, y1), label=label)


def parse_locations(text: str, width: int, height: int) -> list[Location]:
    """Parse a model reply into locations in pixels of a ``width`` x ``height`` image.

    Accepts JSON (optionally fenced, with prose around): a list of objects with ``box``/``bbox``/
    ``bbox_2d`` ([x0, y0, x1, y1]) or ``point``/``point_2d`` ([x, y]) and an optional ``label``, or
    bare coordinate lists. Coordinates all within [0, 1] are read as fractions of the image size.
    Values are clipped to the image. ``[]`` means nothing was found. Raises :class:`VLMError` when
    the reply holds no coordinates at all.
    """
    data = _json_values(text)
    items = data if isinstance(data, list) else ([data] if isinstance(data, dict) else None)
    if items is None:
        groups = re.findall(r"[\[(]\s*(-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?){1,3})\s*[\])]", text)
        items = [[float(v) for v in g.split(",")] for g in groups]
        if not items:
            raise VLMError(f"could not read any coordinates from the model's reply: {text[:300]!r}")
    found: list[Location] = []
    for item in items:
        label = None
        numbers = _numbers(item)
        if isinstance(item, dict):
            label = item.get("label") or item.get("name")
            for key in ("box", "bbox", "bbox_2d", "box_2d", "point", "point_2d"):
                if key in item:
                    numbers = _numbers(item[key])
                    break
        if numbers is None:
            continue
        location = _location(numbers, str(label) if label is not None else None, width, height)
        if location is not None:
            found.append(location)
    if not found and items:
        raise VLMError(f"the model's reply has no box [x0, y0, x1, y1] or point [x, y]: {text[:300]!r}")
    return found


class VLMClient:
    """Side questions to the model that is answering this episode, from inside a cell: ``vlm.ask`` for a
    judgement in words, ``vlm.locate`` for where something is (pixel boxes and points, never a string).

    ``config`` (set up by the host): ``{"url", "token", "timeout_s"}`` of its local side channel, with
    ``"socket"`` (a Unix socket path) instead of ``"url"`` in a sandboxed kernel; or None.
    """

    def __init__(self, config: dict[str, Any] | None) -> None:
        self._config = config

    def __repr__(self) -> str:
        return "vlm (side channel to the model)" if self._config else "vlm (not configured)"

    def _post(self, route: str, payload: dict[str, Any]) -> dict[str, Any]:
        if not self._config:
            raise VLMError("the vlm side channel is not configured in this kernel: the host started it without a model")
        if self._config.get("socket"):
            return self._post_unix(self._config, route, payload)
        request = urllib.request.Request(
            self._config["url"].rstrip("/") + route,
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._config['token']}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=float(self._config.get("timeout_s", 300))) as response:
                return cast(dict[str, Any], json.loads(response.read()))
        except urllib.error.HTTPError as error:
            try:
                message = json.loads(error.read()).get("error", "")
            except (ValueError, AttributeError):
                message = ""
            raise VLMError(
                f"vlm{route.replace('/', '.')} failed (HTTP {error.code}): {message or error.reason}"
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            raise VLMError(f"vlm{route.replace('/', '.')} could not reach the host: {error}") from None

    def _post_unix(self, config: dict[str, Any], route: str, payload: dict[str, Any]) -> dict[str, Any]:
        timeout = float(config.get("timeout_s", 300))
        connection = _UnixHTTPConnection(str(config["socket"]), timeout)
        name = f"vlm{route.replace('/', '.')}"
        try:
            connection.request(
                "POST",
                route,
                body=json.dumps(payload).encode(),
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {config['token']}"},
            )
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as error:
            raise VLMError(f"{name} could not reach the host: {error}") from None
        finally:
            connection.close()
        data: dict[str, Any]
        try:
            data = json.loads(body)
        except ValueError:
            data = {}
        if response.status != 200:
            raise VLMError(f"{name} failed (HTTP {response.status}): {data.get('error') or response.reason}")
        return data

    @staticmethod
    def _encode(image: Any) -> tuple[str, int, int]:
        png, width, height = png_bytes(image)
        return base64.b64encode(png).decode("ascii"), width, height

    def ask(self, images: Any, question: str) -> str:
        """Ask the model a question about one image or a list of images (frames, PIL images, arrays,
        figures); returns its text answer. Use it for judgements that measurement cannot give (what an
        object is, whether it is open); do not trust it for distances or sizes."""
        items = images if isinstance(images, (list, tuple)) else [images]
        payload = {"images": [self._encode(i)[0] for i in items], "question": str(question)}
        return str(self._post("/ask", payload)["text"])

    def locate(self, image: Any, description: str) -> list[Location]:
        """Where the model sees ``description`` in ``image``: a list of :class:`Location` (pixel box
        and/or point, origin top-left), empty when it is not visible. Crop with ``zoom`` first for small
        objects; a detector (``detect``) is usually more precise when one is available."""
        data, width, height = self._encode(image)
        reply = self._post("/locate", {"image": data, "description": str(description)})
        return parse_locations(reply["text"], width, height)


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket (the sandboxed kernel's side channel to the host)."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("vlm", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock
