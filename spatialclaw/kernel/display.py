"""Checking what a kernel's display messages claim before the host keeps any of it: images and state reports.

A cell can publish any display message (``IPython.display.publish_display_data``, or the kernel's own
protocol), so every field is checked for its type, and an image's dimensions are read from its header and
held against :data:`MAX_IMAGE_PIXELS` before a single pixel is decoded. What fails raises
:class:`DisplayRejected`, whose message the collector turns into a note for the model.
"""

from __future__ import annotations

import base64
import binascii
import io
from typing import Any

__all__ = ["MAX_IMAGE_BYTES", "MAX_IMAGE_PIXELS", "DisplayRejected", "clean_state", "image_png"]

MAX_IMAGE_PIXELS = 50_000_000
"""The most pixels (width x height) an image a cell displays may have (an 8K frame has 33 million)."""
MAX_IMAGE_BYTES = 32 << 20
"""The largest encoded image (PNG or JPEG bytes) the host keeps."""


class DisplayRejected(ValueError):
    """A display message the host does not keep; the message says why (it becomes a note)."""


def _decoded(data: Any, mime: str) -> bytes:
    if not isinstance(data, str):
        raise DisplayRejected(f"its {mime} data is a {type(data).__name__}, not a base64 string")
    if len(data) > MAX_IMAGE_BYTES * 4 // 3 + 4:
        raise DisplayRejected(f"its {mime} data is over the {MAX_IMAGE_BYTES >> 20} MiB image limit")
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError) as error:
        raise DisplayRejected(f"its {mime} data is not base64 ({error})") from None


def _check_pixels(width: int, height: int, mime: str) -> None:
    if width <= 0 or height <= 0:
        raise DisplayRejected(f"its {mime} header gives no valid size ({width}x{height})")
    if width * height > MAX_IMAGE_PIXELS:
        raise DisplayRejected(
            f"its {mime} is {width}x{height} pixels, over the limit of {MAX_IMAGE_PIXELS:,} pixels; show a smaller image"
        )


def image_png(data: dict[str, Any]) -> bytes | None:
    """The PNG bytes of a MIME bundle's image (a JPEG is converted), None when it has no image; raises
    :class:`DisplayRejected` for an image that is malformed or too large (checked from its header)."""
    from spatialclaw.primitives.imaging import png_size

    if "image/png" in data:
        png = _decoded(data["image/png"], "image/png")
        _check_pixels(*png_size(png), "image/png")
        from PIL import Image

        try:
            with Image.open(io.BytesIO(png), formats=["PNG"]) as image:
                image.verify()  # chunk structure and checksums, without decoding the pixels
        except Exception as error:
            raise DisplayRejected(f"its image/png is not a valid PNG ({type(error).__name__}: {error})") from None
        return png
    if "image/jpeg" not in data:
        return None
    from PIL import Image

    jpeg = _decoded(data["image/jpeg"], "image/jpeg")
    try:
        with Image.open(io.BytesIO(jpeg), formats=["JPEG"]) as image:  # reads the header only
            _check_pixels(image.width, image.height, "image/jpeg")
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, "PNG", compress_level=1)
    except DisplayRejected:
        raise
    except Image.DecompressionBombError:
        raise DisplayRejected(f"its image/jpeg is over the limit of {MAX_IMAGE_PIXELS:,} pixels") from None
    except Exception as error:  # PIL raises many kinds for a corrupt file (and its own bomb check)
        raise DisplayRejected(f"its image/jpeg does not decode ({type(error).__name__}: {error})") from None
    return buffer.getvalue()


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


_VARIABLE_FIELDS: dict[str, Any] = {
    "name": str,
    "type": str,
    "shape": (list, type(None)),
    "dtype": (str, type(None)),
    "length": (int, type(None)),
    "nbytes": (int, type(None)),
}
_ERROR_FIELDS: dict[str, Any] = {
    "type": str,
    "message": str,
    "traceback": str,
    "line": (int, type(None)),
    "source": (str, type(None)),
}


def _record(value: Any, fields: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any] | None:
    if not isinstance(value, dict) or any(key not in value for key in required):
        return None
    kept = {key: value[key] for key in fields if key in value}
    if not all(isinstance(kept[key], fields[key]) and not isinstance(kept[key], bool) for key in kept):
        return None
    return kept


def clean_state(state: Any, notes: list[str]) -> dict[str, Any]:
    """The runtime's state report with every field of the expected type; what is not is left out and
    named in ``notes``."""
    if not isinstance(state, dict):
        notes.append(f"the kernel's state report was a {type(state).__name__}, not an object: ignored")
        return {}
    clean: dict[str, Any] = {}
    variables = state.get("variables", [])
    rows = [_record(v, _VARIABLE_FIELDS, ("name", "type")) for v in variables] if isinstance(variables, list) else []
    clean["variables"] = [row for row in rows if row is not None and _shape_ok(row.get("shape"))][:1000]
    names = state.get("names", [])
    clean["names"] = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
    skipped = state.get("snapshot_skipped", {})
    if isinstance(skipped, dict):
        clean["snapshot_skipped"] = {k: v for k, v in skipped.items() if isinstance(k, str) and isinstance(v, str)}
    error = state.get("error")
    if error is not None:
        clean["error"] = _record(error, _ERROR_FIELDS, ("type", "message"))
    bad = len(rows) - len(clean["variables"]) if isinstance(variables, list) else 1
    if bad or (error is not None and clean.get("error") is None) or not isinstance(names, list):
        notes.append("the kernel's state report had fields of the wrong type: those were ignored")
    return clean


def _shape_ok(shape: Any) -> bool:
    return shape is None or all(_is(n, int) for n in shape)
