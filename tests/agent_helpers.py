"""Shared pieces of the agent tests: a real photo as input, SDK-backed models pointed at a local server."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from PIL import Image

from spatialclaw import FrameSpec, Task
from spatialclaw.models import RetryPolicy, load_model


def photo(directory: Path, name: str = "astronaut.png", size: int = 256) -> Path:
    """A real photograph (scikit-image's astronaut), downscaled, saved as PNG."""
    import skimage.data

    path = directory / name
    Image.fromarray(skimage.data.astronaut()).resize((size, size)).save(path)
    return path


def solid_frames(directory: Path, colours: list[tuple[int, int, int]], size: tuple[int, int]) -> list[Path]:
    """One single-colour PNG frame per colour, ``frame_<i>.png`` in ``directory``."""
    paths = []
    for i, colour in enumerate(colours):
        path = directory / f"frame_{i}.png"
        Image.new("RGB", size, colour).save(path)
        paths.append(path)
    return paths


def first_or_second(frames: list[Path], question: str, ground_truth: str, task_id: str, **fields: str) -> Task:
    """A task over ``frames`` as one image input whose choices are "first" and "second"."""
    return Task(
        question=question,
        inputs=[FrameSpec.images(frames)],
        choices=["first", "second"],
        ground_truth=ground_truth,
        task_id=task_id,
        **fields,
    )


def fast_retry() -> RetryPolicy:
    return RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02)


def openai_compat(server, **options):
    return load_model(f"openai-compat:scripted@{server.url}", retry=fast_retry(), **options)


def anthropic(server, **options):
    return load_model(
        "anthropic:claude-test", api_key="sk-ant-test", base_url=server.anthropic_url, retry=fast_retry(), **options
    )


def openai_images(request: dict) -> list[Image.Image]:
    """The images of an OpenAI Chat Completions request body, decoded."""
    images = []
    for message in request["messages"]:
        if isinstance(message["content"], list):
            for part in message["content"]:
                if part["type"] == "image_url":
                    data = part["image_url"]["url"].split(",", 1)[1]
                    images.append(Image.open(io.BytesIO(base64.b64decode(data))))
    return images


def openai_text(request: dict) -> str:
    out = []
    for message in request["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(p["text"] for p in content if p["type"] == "text")
    return "\n".join(out)


def cell(code: str, thought: str = "Next step.") -> str:
    return f"{thought}\n```python\n{code}\n```"
