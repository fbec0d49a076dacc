"""Which model answers ``detect`` and ``segment(text=...)``: SAM 3 where its weights are here, else the fallbacks.

The choice is made here and nowhere else, without loading anything and without the network:

- SAM 3 (``$SPATIALCLAW_SAM3_MODEL``: a hub id or a local ``save_pretrained`` folder; default
  ``facebook/sam3``) is the default for ``detect`` and for text prompts of ``segment`` when the installed
  ``transformers`` has ``Sam3Model`` and its weights are on this machine (a local folder, under
  ``$SPATIALCLAW_MODELS``, or in the Hugging Face cache).
- Otherwise ``detect`` uses Grounding DINO tiny and ``segment(text=...)`` uses detector boxes -> SAM ViT-B
  masks. ``$SPATIALCLAW_DETECT_MODEL`` / ``$SPATIALCLAW_SEGMENT_TEXT_MODEL`` and ``model=`` arguments
  override the choice. Point/box prompts use SAM ViT-B; ``track`` uses SAM 2.1 tiny or optical flow.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

__all__ = [
    "BACKEND_NOTES",
    "DEFAULT_SAM3_MODEL",
    "backend_family",
    "depth_family",
    "is_sam3",
    "sam3_id",
    "sam3_problem",
    "text_backend",
    "weights_status",
]

DEFAULT_SAM3_MODEL = "facebook/sam3"

# what each backend is good for, as the prompt's tool list and the availability report show it
BACKEND_NOTES = {
    "sam3": "SAM 3: text (concept) prompt -> every matching instance with box, mask and score in one model",
    "grounding-dino": "Grounding DINO: phrase grounding ('the red mug on the left'), boxes only",
    "owlv2": "OWLv2: one score per label, boxes only",
    "detect+sam": "detector boxes -> SAM ViT-B masks (two models)",
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


def sam3_problem() -> str | None:
    """None when SAM 3 can answer here (packages, ``transformers`` with SAM 3, weights), else why not. Cheap:
    nothing is imported and the network is not touched."""
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        return f"the package(s) {', '.join(missing)} are not installed"
    if not _transformers_has_sam3():
        return "the installed transformers has no SAM 3 (`pip install -U transformers`)"
    return weights_status(sam3_id())


def is_sam3(model_id: str) -> bool:
    """Whether ``model_id`` (hub id or folder) is a SAM 3 checkpoint: its local ``config.json`` (folder,
    ``$SPATIALCLAW_MODELS`` or the Hugging Face cache) says ``model_type`` "sam3..."; without a local config,
    whether it is the configured SAM 3 id or its name says "sam3". Never touches the network."""
    source = os.path.expanduser(model_id)
    root = os.environ.get("SPATIALCLAW_MODELS")
    if not os.path.isdir(source) and root and os.path.isdir(os.path.join(os.path.expanduser(root), model_id)):
        source = os.path.join(os.path.expanduser(root), model_id)
    config_path: str | None = None
    if os.path.isdir(source):
        candidate = os.path.join(source, "config.json")
        config_path = candidate if os.path.isfile(candidate) else None
    elif source.count("/") == 1:
        from huggingface_hub import try_to_load_from_cache

        try:
            cached = try_to_load_from_cache(source, "config.json")
        except Exception:  # an id the hub library rejects
            cached = None
        config_path = cached if isinstance(cached, str) else None
    if config_path is not None:
        with open(config_path) as handle:
            return str(json.load(handle).get("model_type", "")).startswith("sam3")
    return model_id == sam3_id() or "sam3" in os.path.basename(model_id.rstrip("/")).lower()


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
    return sam3_id() if sam3_problem() is None else "fallback"
