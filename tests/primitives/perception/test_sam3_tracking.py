"""SAM 3 behind ``segment(points=/box=)`` and ``track``: tiny random SAM 3 video checkpoints (``Sam3VideoModel``, the
layout of the full ``facebook/sam3``) saved with ``save_pretrained`` and loaded through the production
``from_pretrained`` path as ``Sam3TrackerModel``, ``Sam3TrackerVideoModel`` and ``Sam3VideoModel``, without
torchvision. Shapes, pixels of the original frame, absolute frame indices, dtype, caching, the one place the
backend is chosen (and its report), the errors when weights or packages are missing, and one sandboxed kernel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from spatialclaw.primitives.perception import cache
from spatialclaw.primitives.perception.availability import tool_status
from spatialclaw.primitives.perception.backends import prompt_backend, sam3_problem, sam3_tasks, track_backend
from spatialclaw.primitives.perception.models import MissingWeightsError, clear, load_model, loaded_models
from spatialclaw.primitives.perception.sam3 import Sam3TrackerVideoInputs
from spatialclaw.primitives.perception.sam3_prompts import load_sam3_tracker
from spatialclaw.primitives.perception.sam3_tracking import load_sam3_tracker_video, sam3_track
from spatialclaw.primitives.perception.segment import segment
from spatialclaw.primitives.perception.track import track
from spatialclaw.primitives.perception.track_result import Track
from tests.indexed_frames import IndexedFrame
from tests.tiny_instance_models import clip_tokenizer

H, W = 72, 100  # not square, so that x/y or width/height mix-ups show
SIZE, PATCH = 112, 14  # the tiny model's input: 112 px, 8 x 8 patches


def build_tiny_sam3(folder: Path, video: bool = True, queries: int = 2) -> Path:
    """A tiny random SAM 3 saved like the hub checkpoint: ``Sam3VideoModel`` (detector + tracker, model_type
    "sam3_video") or, with ``video=False``, the image model alone (model_type "sam3"), with its tokenizer and
    preprocessor configs (112 px, mean = std = 0.5). Its query and text projections are set so that every
    query scores about 1 against any text, so text prompts find objects at the default thresholds."""
    import torch
    from transformers import Sam3Config, Sam3Model, Sam3VideoConfig, Sam3VideoModel

    grid = SIZE // PATCH
    tokenizer = clip_tokenizer(32)
    vision = dict(
        backbone_config=dict(
            model_type="sam3_vit_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, image_size=SIZE, patch_size=PATCH, window_size=4, global_attn_indexes=[1],
            pretrain_image_size=SIZE,
        ),
        fpn_hidden_size=128,  # the tracker splits object pointers into 64-channel memory tokens: > 64
        backbone_feature_sizes=[[4 * grid] * 2, [2 * grid] * 2, [grid] * 2],
    )  # fmt: skip
    layers = dict(hidden_size=128, num_attention_heads=2, intermediate_size=64)
    detector = dict(
        vision_config=vision,
        text_config=dict(
            vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, projection_dim=128, num_hidden_layers=1,
            num_attention_heads=2, max_position_embeddings=32, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        ),
        geometry_encoder_config=dict(num_layers=1, **layers),
        detr_encoder_config=dict(num_layers=1, **layers),
        detr_decoder_config=dict(num_layers=1, num_queries=queries, **layers),
        mask_decoder_config=dict(hidden_size=128, num_upsampling_stages=3, num_attention_heads=2),
    )  # fmt: skip
    tracker = dict(
        vision_config=vision, image_size=SIZE,
        prompt_encoder_config=dict(hidden_size=128, image_size=SIZE, patch_size=PATCH),
        mask_decoder_config=dict(hidden_size=128, mlp_dim=64, num_attention_heads=2, iou_head_hidden_dim=16),
        memory_attention_hidden_size=128, memory_attention_num_layers=1,
        memory_attention_feed_forward_hidden_size=128, memory_attention_rope_feat_sizes=[grid, grid],
        memory_encoder_hidden_size=128, memory_encoder_output_channels=64,  # 64: fixed by the memory attention
        mask_downsampler_embed_dim=128, memory_fuser_embed_dim=128, memory_fuser_intermediate_dim=128, num_maskmem=3,
    )  # fmt: skip
    torch.manual_seed(0)
    if video:
        config = Sam3VideoConfig(detector_config=detector, tracker_config=tracker, low_res_mask_size=4 * grid)
        model = Sam3VideoModel(config).eval()
        image_model = model.detector_model
    else:
        model = image_model = Sam3Model(Sam3Config(**detector)).eval()
    with torch.no_grad():  # query . text = 128 / sqrt(128) (clamped at 12) and presence logit 10: scores ~1
        for projection in (image_model.dot_product_scoring.text_proj, image_model.dot_product_scoring.query_proj):
            projection.weight.zero_()
            projection.bias.fill_(1.0)
        image_model.detr_decoder.presence_head.layer3.bias.fill_(10.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    for name in ("preprocessor_config.json", "video_preprocessor_config.json"):
        config_json = {"size": {"height": SIZE, "width": SIZE}, "image_mean": [0.5] * 3, "image_std": [0.5] * 3}
        (folder / name).write_text(json.dumps(config_json))
    return folder


@pytest.fixture(scope="module")
def tiny_video(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(build_tiny_sam3(tmp_path_factory.mktemp("sam3") / "sam3"))


@pytest.fixture(scope="module")
def tiny_image_only(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(build_tiny_sam3(tmp_path_factory.mktemp("sam3-image") / "sam3-image", video=False, queries=3))


@pytest.fixture
def no_hub(tmp_path, monkeypatch):
    """No network, an empty Hugging Face cache and no configured models."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in (
        "SPATIALCLAW_SAM3_MODEL", "SPATIALCLAW_DETECT_MODEL", "SPATIALCLAW_SEGMENT_TEXT_MODEL",
        "SPATIALCLAW_SEGMENT_MODEL", "SPATIALCLAW_TRACK_MODEL", "SPATIALCLAW_MODELS",
        "SPATIALCLAW_PERCEPTION", "SPATIALCLAW_PERCEPTION_SOCKET",
    ):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    clear()


def video(count: int = 5, first: int = 50, seed: int = 0) -> list[IndexedFrame]:
    rng = np.random.default_rng(seed)
    return [IndexedFrame(rng.integers(0, 255, (H, W, 3), dtype=np.uint8), first + t) for t in range(count)]


def square(x0: int = 60, y0: int = 12, size: int = 30) -> np.ndarray:
    mask = np.zeros((H, W), bool)
    mask[y0 : y0 + size, x0 : x0 + size] = True  # off centre, in the right half: a swapped x/y falls outside
    return mask


def test_points_are_scaled_to_model_input_pixels_as_transformers_own_processor_scales_them(tiny_video):
    """Units: (x, y) pixels of the original frame -> pixels of the 112 px model input, x by 112/W and y by
    112/H, compared with ``Sam3TrackerProcessor``'s own normalisation (which needs no torchvision)."""
    import torch
    from transformers import Sam3TrackerProcessor

    loaded = load_sam3_tracker(tiny_video, device="cpu")
    frame = video(1)[0]
    clicks = np.array([[70.0, 20.0], [90.0, 60.0]])
    reference = Sam3TrackerProcessor._normalize_coordinates(None, SIZE, torch.tensor(clicks), (H, W))
    assert loaded.processor.points(clicks, W, H).numpy() == pytest.approx(reference.numpy())
    with torch.inference_mode():
        out = loaded.model(
            pixel_values=loaded.processor.image(frame.array),
            input_points=reference[None, None].float(),
            input_labels=torch.tensor([[[1, 0]]]),
            multimask_output=True,
        )
    logits = torch.nn.functional.interpolate(out.pred_masks[0], size=(H, W), mode="bilinear", align_corners=False)
    best = int(out.iou_scores[0, 0].argmax())
    found = segment(frame, points=clicks, point_labels=[1, 0], model=tiny_video)
    assert len(found) == 1 and found.backend == "sam3"
    assert np.array_equal(found[0].mask, (logits[0, best] > 0).numpy())
    assert found[0].score == pytest.approx(float(out.iou_scores[0, 0, best].clamp(0, 1)), abs=1e-6)
    assert found[0].frame_index == 50 and found[0].mask.shape == (H, W)


def test_box_prompts_give_one_masked_instance_each_at_frame_resolution(tiny_video):
    frame = video(1)[0]
    found = segment(frame, box=[(10, 5, 60, 50), (55, 20, 99, 70)], label="thing", model=tiny_video, device="cpu")
    assert len(found) == 2 and found.labels == ["thing", "thing"]
    for item in found:
        assert item.mask is not None and item.mask.shape == (H, W) and item.mask.dtype == bool
        assert 0.0 <= item.score <= 1.0 and item.frame_index == 50


@pytest.fixture
def sam3_here(tiny_video, no_hub, monkeypatch):
    monkeypatch.setenv("SPATIALCLAW_SAM3_MODEL", tiny_video)
    return tiny_video


def test_the_tracker_gets_the_checkpoints_weights_not_random_ones(tiny_video):
    """transformers 5.24 leaves the tracker's mask decoder randomly initialised when it loads a "sam3_video"
    checkpoint as ``Sam3TrackerModel``; the production loader maps the checkpoint's prefix."""
    import torch
    from transformers import Sam3VideoModel

    reference = Sam3VideoModel.from_pretrained(tiny_video)
    tracker = load_sam3_tracker(tiny_video, device="cpu").model
    for name, value in reference.tracker_model.state_dict().items():
        if name.startswith(("mask_decoder.", "prompt_encoder.")):
            assert torch.equal(tracker.state_dict()[name], value), name
    backbone = reference.detector_model.vision_encoder.backbone.state_dict()
    for name, value in tracker.vision_encoder.backbone.state_dict().items():
        assert torch.equal(value, backbone[name]), name


def test_sam3_answers_points_boxes_and_track_wherever_its_weights_are_and_the_report_says_so(sam3_here):
    assert sam3_tasks(sam3_here) == {"text", "prompts", "video", "video-text"}
    assert prompt_backend() == sam3_here and track_backend() == ("sam3", sam3_here, "")
    assert track_backend(text=True) == ("sam3", sam3_here, "")
    report = tool_status()
    assert report["segment"].available and report["segment"].backend == "sam3"
    assert "point/box prompts: SAM 3 tracker" in report["segment"].note
    assert report["track"].backend == "sam3" and "SAM 3 video" in report["track"].note
    assert sam3_here in report["track"].note
    frames = video()
    assert segment(frames[0], points=[(70, 20)]).backend == "sam3"
    assert segment(frames[0], box=(10, 5, 60, 50), model="sam3").backend == "sam3"  # the alias: the configured one
    assert track(frames, masks=square()).method.startswith("SAM 3 video (sam3)")


def test_a_mask_is_followed_both_ways_with_absolute_indices_and_kept_in_its_own_frame(tiny_video):
    frames, prompt = video(), square()
    result = track(frames, masks=prompt, start_index=52, method="sam3", model=tiny_video)
    assert isinstance(result, Track) and result.start_index == 52
    assert result.frame_indices.tolist() == [50, 51, 52, 53, 54]
    assert result.masks is not None and result.masks.shape == (5, H, W) and result.masks.dtype == bool
    start = result.at(52)  # SAM 3 keeps a mask prompt as the output of its own frame
    assert start.iou(start.with_mask(prompt)) > 0.9 and start.score > 0.99
    assert start.box == pytest.approx((60, 12, 90, 42), abs=1.0)  # pixels of the original frame, x then y
    assert all(item.mask is not None for item in result)


def test_boxes_and_points_give_one_track_per_object(tiny_video):
    frames = video(4, first=10)
    boxes = track(frames, boxes=[(10, 5, 40, 30), (60, 20, 95, 60)], method="sam3", model=tiny_video)
    assert isinstance(boxes, list) and len(boxes) == 2
    clicked = track(frames, points=[(70, 20), (20, 60)], point_labels=[1, 0], start_index=11, model=tiny_video)
    for result in boxes + [clicked]:
        assert result.frame_indices.tolist() == [10, 11, 12, 13] and result.method.startswith("SAM 3 video")
        assert result.masks.shape == (4, H, W)
        for item in result:
            x0, y0, x1, y1 = item.box
            assert 0 <= x0 <= x1 <= W and 0 <= y0 <= y1 <= H
            if item.score > 0:  # visible: the box is the tight box around the mask
                ys, xs = np.nonzero(item.mask)
                assert item.box == (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    assert clicked.start_index == 11


def test_a_text_concept_is_found_and_followed_through_the_video(tiny_video):
    frames = video(3, first=20)
    found = track(frames, text="cup", model=tiny_video)
    assert isinstance(found, list) and len(found) > 0
    for result in found:
        assert result.label == "cup" and result.method == "SAM 3 video, text concept (sam3)"
        assert result.frame_indices.tolist() == [20, 21, 22]
        assert result.at(result.start_index).score > 0  # the start frame is where it was first seen
        assert result.masks.shape == (3, H, W)
        for item in result:
            if item.score > 0:
                ys, xs = np.nonzero(item.mask)
                assert item.box == (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
            else:
                assert item.box == (0.0, 0.0, 0.0, 0.0) and not item.mask.any()
    # objects of one concept do not share pixels
    for t in range(3):
        stacked = np.stack([result[t].mask for result in found])
        assert stacked.sum(axis=0).max() <= 1


def test_a_half_precision_tracker_gives_bool_masks_and_float_scores(tiny_video):
    import torch

    loaded = load_model(
        "sam3-video-tracker", tiny_video, device="cpu", dtype=torch.bfloat16,
        model_class="Sam3TrackerVideoModel", processor_class=Sam3TrackerVideoInputs,
    )  # fmt: skip
    assert loaded.model.dtype == torch.bfloat16
    frames = video(3)
    (result,) = sam3_track(loaded, [f.array for f in frames], [50, 51, 52], [square()], "mask", 0)
    assert [item.frame_index for item in result] == [50, 51, 52]
    assert all(isinstance(item.score, float) and item.mask.dtype == bool for item in result)
    assert result[0].iou(result[0].with_mask(square())) > 0.9


def test_each_model_loads_once_per_process_and_results_come_from_the_cache(tiny_video):
    clear()
    first = load_sam3_tracker_video(tiny_video, device="cpu")
    assert load_sam3_tracker_video(tiny_video, device="cpu") is first
    frames = video(3)
    track(frames, masks=square(), method="sam3", model=tiny_video, device="cpu")
    hits = cache.stats["hits"]
    again = track(frames, masks=square(), method="sam3", model=tiny_video, device="cpu")
    assert cache.stats["hits"] == hits + 1 and again.frame_indices.tolist() == [50, 51, 52]
    assert [kind for kind, _, _ in loaded_models()].count("sam3-video-tracker") == 1


def test_without_sam3_weights_auto_falls_back_and_says_why_and_explicit_sam3_names_the_hub_id(no_hub):
    frames = video(3)
    result = track(frames, masks=square())
    assert result.method.startswith("optical flow") and "SAM 3 unavailable" in result.method
    assert "facebook/sam3" in result.method and "SAM 2 unavailable" in result.method
    with pytest.raises(MissingWeightsError, match="facebook/sam3") as error:
        track(frames, masks=square(), method="sam3")
    assert "hf download facebook/sam3" in str(error.value)
    with pytest.raises(ValueError, match="needs SAM 3 video") as refused:
        track(frames, points=[(70, 20)])
    assert "segment(frames[i], points=" in str(refused.value)
    with pytest.raises(ValueError, match="needs SAM 3 video"):
        track(frames, points=[(70, 20)], method="flow")
    report = tool_status()
    assert report["track"].available and report["track"].backend == "flow"
    assert "SAM 3" in report["track"].note and "optical flow" in report["track"].note
    assert track_backend()[0] == "flow" and prompt_backend() == "fallback"


def test_an_image_only_sam3_checkpoint_serves_text_but_not_points_or_video(tiny_image_only, no_hub, monkeypatch):
    monkeypatch.setenv("SPATIALCLAW_SAM3_MODEL", tiny_image_only)
    assert sam3_problem("text") is None and sam3_tasks(tiny_image_only) == {"text"}
    assert "does not serve point/box prompts" in (sam3_problem("prompts") or "")
    assert "model_type 'sam3'" in (sam3_problem("video") or "")
    assert prompt_backend() == "fallback" and track_backend()[0] == "flow"
    frame = video(1)[0]
    with pytest.raises(ValueError, match="does not serve point/box prompts"):
        segment(frame, points=[(70, 20)], model=tiny_image_only)
    with pytest.raises(ValueError, match="does not serve video tracking"):
        track(video(3), masks=square(), method="sam3", model=tiny_image_only)
    # text in a video without SAM 3 video: SAM 3 (image) finds the objects in the start frame, flow follows them
    found = track(video(3, first=7), text="cup", start_index=8)
    assert len(found) >= 1 and all(result.label == "cup" for result in found)
    for result in found:
        assert result.start_index == 8 and result.frame_indices.tolist() == [7, 8, 9]
        assert "found in frame 8 by segment(text=) via sam3-image" in result.method
        assert "SAM 3 video unavailable" in result.method and result.method.startswith("optical flow")


def test_a_transformers_without_sam3_falls_back_and_says_to_upgrade(tiny_video, no_hub, monkeypatch):
    import transformers

    monkeypatch.setenv("SPATIALCLAW_SAM3_MODEL", tiny_video)
    monkeypatch.setattr(transformers, "Sam3Model", None)  # as an older transformers has it: absent
    assert "pip install -U transformers" in (sam3_problem("video") or "")
    assert track_backend()[0] == "flow" and prompt_backend() == "fallback"


def test_in_a_sandboxed_kernel_track_and_segment_answer_with_sam3_and_the_manual_says_so(sam3_here):
    from spatialclaw import Kernel

    cell = (
        "import numpy as np\n"
        "rng = np.random.default_rng(0)\n"
        f"clip = [rng.integers(0, 255, ({H}, {W}, 3), dtype=np.uint8) for _ in range(3)]\n"
        "m = np.zeros(clip[0].shape[:2], bool); m[12:42, 60:90] = True\n"
        "t = track(clip, masks=m)\n"
        "s = segment(clip[0], points=[(70, 20)])\n"
        "print(t.method); print(s.backend); print(t.frame_indices.tolist(), t.masks.shape)\n"
    )
    with Kernel(readable=[Path(sam3_here).parent]) as kernel:
        manual = kernel.execute("manual('track')")
        result = kernel.execute(cell)
        report = kernel.tool_status()
    assert result.error is None, result.error
    assert "instantiate a model of type" not in result.stderr  # loading SAM 3's parts is not a warning here
    method, backend, shapes = result.stdout.strip().splitlines()
    assert method == "SAM 3 video (sam3)" and backend == "sam3"
    assert shapes == f"[0, 1, 2] (3, {H}, {W})"
    assert "Here: backend sam3: answered by" in manual.stdout and "SAM 3 video" in manual.stdout
    assert report is not None and report["track"]["backend"] == "sam3"
