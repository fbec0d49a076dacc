"""Which model answers ``detect``, ``segment`` and ``track``: SAM 3 where its weights are here, else the fallbacks.

The choice is made here and nowhere else, without loading anything and without the network:

- SAM 3 (``$SPATIALCLAW_SAM3_MODEL``: a hub id or a local ``save_pretrained`` folder; default
  ``facebook/sam3``) is the default wherever the installed ``transformers`` has SAM 3 and its weights are on
  this machine (a local folder, under ``$SPATIALCLAW_MODELS``, or in the Hugging Face cache), for each task
  its checkpoint serves (:func:`sam3_tasks`, read from its ``config.json``): the full ``facebook/sam3``
  checkpoint (``model_type`` "sam3_video") serves all four: ``detect`` and ``segment(text=...)`` ("text",
  ``Sam3Model``), ``segment(points=/box=)`` ("prompts", ``Sam3TrackerModel``), ``track`` from a mask, box or
  points ("video", ``Sam3TrackerVideoModel``) and ``track(text=...)`` ("video-text", ``Sam3VideoModel``).
- Otherwise ``detect`` uses Grounding DINO tiny, ``segment(text=...)`` detector boxes -> SAM ViT-B masks,
  point/box prompts SAM ViT-B, and ``track`` SAM 2.1 tiny video where its weights and torchvision are here,
  else optical flow. ``$SPATIALCLAW_DETECT_MODEL`` / ``$SPATIALCLAW_SEGMENT_TEXT_MODEL`` /
  ``$SPATIALCLAW_SEGMENT_MODEL`` / ``$SPATIALCLAW_TRACK_MODEL`` and ``model=`` arguments override the choice.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

__all__ = [
    "BACKEND_NOTES",
    "DEFAULT_SAM3_MODEL",
    "SAM3_TASKS",
    "backend_family",
    "depth_family",
    "is_sam3",
    "prompt_backend",
    "sam2_problem",
    "sam3_id",
    "sam3_problem",
    "sam3_tasks",
    "text_backend",
    "track_backend",
    "weights_status",
]

DEFAULT_SAM3_MODEL = "facebook/sam3"

# what a SAM 3 checkpoint serves, by the model_type of its config.json: "text" (Sam3Model: detect,
# segment(text=)), "prompts" (Sam3TrackerModel: segment(points=/box=)), "video" (Sam3TrackerVideoModel:
# track from a mask/box/points), "video-text" (Sam3VideoModel: track(text=))
SAM3_TASKS: dict[str, frozenset[str]] = {
    "sam3_video": frozenset({"text", "prompts", "video", "video-text"}),
    "sam3_tracker_video": frozenset({"prompts", "video"}),
    "sam3_tracker": frozenset({"prompts"}),
    "sam3": frozenset({"text"}),
}
_TASK_NAMES = {
    "text": "text prompts (detect, segment(text=))",
    "prompts": "point/box prompts (segment(points=/box=))",
    "video": "video tracking from a mask/box/points",
    "video-text": "video tracking by a text concept",
}

# what each backend is good for, as the prompt's tool list and the availability report show it
BACKEND_NOTES = {
    "sam3": "SAM 3: text (concept) prompt -> every matching instance with box, mask and score in one model",
    "grounding-dino": "Grounding DINO: phrase grounding ('the red mug on the left'), boxes only",
    "owlv2": "OWLv2: one score per label, boxes only",
    "detect+sam": "detector boxes -> SAM ViT-B masks (two models)",
    "sam3-tracker": "SAM 3 tracker: point/box prompts -> one mask per object (SAM-style, on SAM 3's backbone)",
    "sam": "SAM: point/box prompts -> one mask per object",
    "sam3-video": "SAM 3 video: a mask, box or points (or a text concept: every matching object) followed "
    "through the frames, masks per frame",
    "sam2-video": "SAM 2.1 video: a mask or box followed through the frames, masks per frame (text: segmented in "
    "the start frame first)",
    "flow": "optical flow (Lucas-Kanade + similarity, no weights): rigid objects, steps up to ~40% of their size",
    "depth-pro": "Depth Pro: metric depth and the camera's focal length from one image",
    "depth-anything": "Depth Anything V2 metric: metric depth from one image (focal length not estimated)",
    "stereo-sgbm": "classical stereo (SGBM) on a rectified pair: metric depth from the baseline, no weights",
    "da3": "Depth Anything 3: metric depth and camera poses from unposed RGB views at once",
}


def weights_status(model_id: str) -> str | None:
    """None when the weights of ``model_id`` (a hub id or a folder) are on this machine, else the reason."""
    path = Path(os.path.expanduser(model_id))
    if path.is_dir():
        return None if (path / "config.json").is_file() else f"the folder {path} holds no config.json"
    if model_id.startswith((".", "/", "~")) or model_id.count("/") > 1:
        return f"the local folder {path} does not exist"
    root = os.environ.get("SPATIALCLAW_MODELS")
    if root and (Path(root).expanduser() / model_id).is_dir():
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return "huggingface_hub is not installed"
    try:
        cached = try_to_load_from_cache(model_id, "config.json")
    except Exception as error:  # an id the hub library rejects
        return f"{model_id!r} is not a valid hub id ({error})"
    if isinstance(cached, str):
        return None
    return f"the weights of {model_id} are not on this machine (`hf download {model_id}`, or model= a local folder)"


def sam3_id(model: str | os.PathLike[str] | None = None) -> str:
    """The SAM 3 hub id or folder: ``model`` (``"sam3"`` means the default), ``$SPATIALCLAW_SAM3_MODEL``,
    else ``facebook/sam3``."""
    name = os.fspath(model) if model is not None else ""
    if not name or name.lower() == "sam3":
        return os.environ.get("SPATIALCLAW_SAM3_MODEL") or DEFAULT_SAM3_MODEL
    return name


def sam3_problem(task: str = "text", model: str | os.PathLike[str] | None = None) -> str | None:
    """None when SAM 3 can answer ``task`` here ("text", "prompts", "video" or "video-text": see
    :data:`SAM3_TASKS`) with ``model`` (default: the configured SAM 3, :func:`sam3_id`), else why not: a
    missing package, a ``transformers`` without SAM 3, missing weights, or a checkpoint that does not serve
    ``task``. Cheap: nothing is imported and the network is not touched."""
    if task not in _TASK_NAMES:
        raise ValueError(f"task must be one of {sorted(_TASK_NAMES)}, got {task!r}")
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        return f"the package(s) {', '.join(missing)} are not installed"
    if not _transformers_has_sam3():
        return "the installed transformers has no SAM 3 (`pip install -U transformers`)"
    model_id = sam3_id(model)
    problem = weights_status(model_id)
    if problem is not None:
        return problem
    tasks = sam3_tasks(model_id)
    if tasks is not None and task not in tasks:
        return (
            f"the SAM 3 checkpoint {model_id} (model_type {_model_type(model_id)!r}) does not serve "
            f"{_TASK_NAMES[task]}; the full facebook/sam3 checkpoint (model_type 'sam3_video') serves every task"
        )
    return None


def sam3_tasks(model_id: str) -> frozenset[str] | None:
    """The tasks (:data:`SAM3_TASKS`) the checkpoint ``model_id`` serves, read from its local ``config.json``
    (folder, ``$SPATIALCLAW_MODELS`` or the Hugging Face cache); None when no local config says (then its
    weights are not here either), an empty set for a config that is not SAM 3's."""
    model_type = _model_type(model_id)
    return None if model_type is None else SAM3_TASKS.get(model_type, frozenset())


def sam2_problem(model: str | os.PathLike[str] | None = None) -> str | None:
    """None when SAM 2 video can run here with ``model`` (``$SPATIALCLAW_TRACK_MODEL`` or SAM 2.1 tiny):
    ``transformers`` with ``Sam2VideoModel``, torchvision (its processors need it) and the weights; else why
    not. Nothing is imported."""
    from spatialclaw.primitives.perception.sam2_tracking import DEFAULT_TRACK_MODEL

    name = os.fspath(model) if model is not None else os.environ.get("SPATIALCLAW_TRACK_MODEL") or DEFAULT_TRACK_MODEL
    missing = [name for name in ("torch", "transformers", "torchvision") if importlib.util.find_spec(name) is None]
    if missing:
        return (
            f"the package(s) {', '.join(missing)} are not installed (SAM 2's transformers processors need torchvision)"
        )
    return weights_status(name)


def is_sam3(model_id: str) -> bool:
    """Whether ``model_id`` (hub id or folder) is a SAM 3 checkpoint: its local ``config.json`` (folder,
    ``$SPATIALCLAW_MODELS`` or the Hugging Face cache) says ``model_type`` "sam3..."; without a local config,
    whether it is the configured SAM 3 id or its name says "sam3". Never touches the network."""
    model_type = _model_type(model_id)
    if model_type is not None:
        return model_type.startswith("sam3")
    return model_id == sam3_id() or "sam3" in os.path.basename(model_id.rstrip("/")).lower()


def _model_type(model_id: str) -> str | None:
    """The ``model_type`` of ``model_id``'s local ``config.json`` (folder, ``$SPATIALCLAW_MODELS`` or the
    Hugging Face cache), "" for a config without one; None without a local config."""
    source = os.path.expanduser(model_id)
    root = os.environ.get("SPATIALCLAW_MODELS")
    if not os.path.isdir(source) and root and os.path.isdir(os.path.join(os.path.expanduser(root), model_id)):
        source = os.path.join(os.path.expanduser(root), model_id)
    config_path: str | None = None
    if os.path.isdir(source):
        candidate = os.path.join(source, "config.json")
        config_path = candidate if os.path.isfile(candidate) else None
    elif source.count("/") == 1:
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:  # a base install (no `perception` extra): no hub cache to look in
            return None
        try:
            cached = try_to_load_from_cache(source, "config.json")
        except Exception:  # an id the hub library rejects
            cached = None
        config_path = cached if isinstance(cached, str) else None
    if config_path is None:
        return None
    try:
        with open(config_path) as handle:
            return str(json.load(handle).get("model_type", ""))
    except (OSError, ValueError):  # an unreadable config: as if there were none
        return None


def backend_family(model_id: str) -> str:
    """ "sam3", "owlv2" or "grounding-dino" for a detector id or folder (by its local config, else its name)."""
    if is_sam3(model_id):
        return "sam3"
    return "owlv2" if "owl" in model_id.lower() else "grounding-dino"


def depth_family(model_id: str) -> str:
    """ "depth-pro", "depth-anything", "stereo-sgbm" or "depth" (another model) for a depth model id or
    folder: by the ``model_type`` of its local ``config.json`` where there is one, else by its name."""
    if model_id == "stereo-sgbm":
        return model_id
    folder = Path(os.path.expanduser(model_id))
    root = os.environ.get("SPATIALCLAW_MODELS")
    if not folder.is_dir() and root:
        folder = Path(root).expanduser() / model_id
    name = model_id.lower()
    try:
        name = str(json.loads((folder / "config.json").read_text()).get("model_type", name)).lower()
    except (OSError, ValueError):
        pass  # no local config: judge by the name
    name = name.replace("_", "").replace("-", "")
    return "depth-pro" if "depthpro" in name else "depth-anything" if "depthanything" in name else "depth"


def _transformers_has_sam3() -> bool:
    """Without importing transformers (seconds): its package folder holds ``models/sam3``; when it is
    imported already, it also exports ``Sam3Model``."""
    import sys

    loaded = sys.modules.get("transformers")
    if loaded is not None and getattr(loaded, "Sam3Model", None) is None:
        return False
    spec = importlib.util.find_spec("transformers")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    return any((Path(folder) / "models" / "sam3" / "modeling_sam3.py").is_file() for folder in folders)


def text_backend() -> str:
    """The default model for text prompts: the SAM 3 id when SAM 3 can answer here, else ``"fallback"``."""
    return sam3_id() if sam3_problem("text") is None else "fallback"


def prompt_backend() -> str:
    """The default model for point/box prompts of ``segment``: the SAM 3 id when its checkpoint serves them
    here (``Sam3TrackerModel``), else ``"fallback"`` (SAM ViT-B)."""
    return sam3_id() if sam3_problem("prompts") is None else "fallback"


def track_backend(text: bool = False) -> tuple[str, str, str]:
    """``(backend, model, why)`` for ``track(method="auto")`` here: ``("sam3", SAM 3 id, "")`` when SAM 3
    video serves the prompt kind (``text``: by concept, else from a mask/box/points); else ``("sam2", SAM 2
    id, why not SAM 3)`` when SAM 2 video can run; else ``("flow", "", why neither)``. Nothing is loaded."""
    from spatialclaw.primitives.perception.sam2_tracking import DEFAULT_TRACK_MODEL

    sam3 = sam3_problem("video-text" if text else "video")
    if sam3 is None:
        return "sam3", sam3_id(), ""
    sam2 = sam2_problem()
    if sam2 is None:
        return "sam2", os.environ.get("SPATIALCLAW_TRACK_MODEL") or DEFAULT_TRACK_MODEL, f"SAM 3: {sam3}"
    return "flow", "", f"SAM 3: {sam3}; SAM 2: {sam2}"
