"""The reviewed table of every fenced block of README.md, CONTRIBUTING.md and docs/*.md: each either runs
from a bare clone of the repository (``RUNS``) or is listed in ``SKIPPED`` with the reason
(``tests/docs/test_docs_every_block.py`` checks both ways and runs the runs).

How a run runs (:class:`doc_examples.Run`): in an empty folder of a copy of the repository with nothing beside
it (no ``../shared``), no API key, ``HF_HUB_OFFLINE=1`` and an empty home folder (no hub weights), in a shell
where ``source .venv/bin/activate`` ran, as the README says (``cwd="root"``: at the repository root, for
the README's commands). Consecutive python blocks of one run are one script (a page's examples build on each
other); bash and untagged command blocks run as written; ``console`` blocks are transcripts: each ``$``
command must print the lines shown under it. The files a block names as the user's own (``kitchen1.jpg``,
``room.mp4``) are made first (``inputs``). Where a block needs a model, ``edits`` put the keyless
``scripted:look-and-answer`` in place of the page's model spec; blocks that run the synthetic benchmark as
written (``server=True``) send their ``openai:`` calls to a local scripted OpenAI-compatible server that
answers from the ground truth, so the transcripts and filters shown (``--correct-only``) hold. ``shows``
are what the output must contain; ``output`` names the untagged block that shows the printed lines.
Runs over about 10 s that repeat what a default run covers, and the long ones, are ``slow``.
"""

from __future__ import annotations

from tests.doc_examples import Run

KEYLESS = "scripted:look-and-answer"


def keyless(*specs: str) -> tuple[tuple[str, str], ...]:
    return tuple((spec, KEYLESS) for spec in specs)


RUNS: dict[str, Run] = {
    # ---- README.md, CONTRIBUTING.md -----------------------------------------------------------------
    "readme-first-hour": Run(
        "README.md",
        ("skimage.data.stereo_motorcycle()", 'with Kernel(frames=["room_0.jpg"'),
        shows=(r"openai: exported 4 of 4 episode", r"^2 \(741, 500\)", r"^\[1 image\(s\) attached: 1: first view"),
        cwd="root",
    ),
    "readme-demo": Run(
        "README.md",
        ("bash scripts/demo.sh",),
        edits=(("bash scripts/test.sh ", "# the test suite runs this test: "),),
        shows=(r"^answer: 2\.4$",),
        cwd="root",
        slow=True,  # `spatialclaw demo` after bootstrap's no-op: the agent.md block runs the demo by default
    ),
    # ---- docs/agent.md -------------------------------------------------------------------------------
    "agent-demo": Run("docs/agent.md", ("spatialclaw demo",), shows=(r"^answer: 2\.4$",)),
    "agent-run": Run(
        "docs/agent.md",
        ('--question "Which is closer to the fridge?"',),
        inputs=("kitchen1.jpg", "kitchen2.jpg", "room.mp4"),
        edits=keyless("openai:gpt-4.1", "openai-compat:Qwen/Qwen2.5-VL-7B-Instruct@http://localhost:8000/v1"),
        shows=(r"^answer: ",),
    ),
    "agent-python": Run(
        "docs/agent.md",
        ('Agent("anthropic:claude-opus-4-5"',),
        inputs=("room.mp4",),
        edits=keyless("anthropic:claude-opus-4-5"),
        shows=(r"^answered ",),
        slow=True,
    ),
    "agent-scripted-server": Run("docs/agent.md", ("astronaut.png",), shows=(r"^answered B$",)),
    "agent-limits": Run(
        "docs/agent.md", ("Limits(time_s=2)",), shows=(r"^timeout LimitHit\(kind='time', value=2\.0, used=\d+\.\d+\)$",)
    ),
    "agent-question": Run(
        "docs/agent.md", ("Options: A: Southwest",), shows=(r"options A and C have the same text \('Southwest'\)",)
    ),
    "agent-several-inputs": Run(
        "docs/agent.md",
        ("--video kitchen.mp4 --video hall.mp4",),
        inputs=("kitchen.mp4", "hall.mp4", "key16.png", "key32.png"),
        edits=keyless("openai:gpt-4.1"),
        shows=(r"^answer: ",),
        slow=True,
    ),
    # ---- docs/benchmarks.md (the runner's commands run as written, against the answering server) -------
    "benchmarks-quick-start": Run(
        "docs/benchmarks.md",
        ("--out runs/syn-gpt41-base --interface no-tools",),
        server=True,
        shows=(r"tool gain",),
        slow=True,
    ),
    "benchmarks-own-spec": Run(
        "docs/benchmarks.md",
        ('Path("my_benchmarks").mkdir(exist_ok=True)', "spatialclaw bench --include-path my_benchmarks --list"),
        shows=(
            r"^runs/red-squares: ran 2, .* overall 100\.0%",
            r"^red-squares .* \[from .*/my_benchmarks/red_squares\.py\]$",
            r"^runs/red-squares-by-name: ran 2, .* overall 100\.0%",
        ),
        slow=True,  # about a minute (four kernels); tests/commands/test_own_extensions.py covers both ways
    ),
    "benchmarks-synthetic": Run(
        "docs/benchmarks.md", ("generate(6, seed=0",), shows=(r"^synthetic/0-0000-distance distance 2\.869$",)
    ),
    "benchmarks-interfaces": Run(
        "docs/benchmarks.md",
        ("for interface in no-tools single-pass",),
        server=True,
        shows=(r"^## synthetic: interfaces \(openai:gpt-4\.1\)",),
        slow=True,
    ),
    "benchmarks-scoring": Run("docs/benchmarks.md", ('extract_choice("The answer is (B)"',)),
    "benchmarks-official-scoring": Run("docs/benchmarks.md", ('"dsi_choice").value == 1.0',)),
    # ---- docs/depth_and_reconstruction.md -------------------------------------------------------------
    "stereo": Run(
        "docs/depth_and_reconstruction.md", ("stereo_depth(left, right, focal_px=994.978",), shows=(r"^0\.002\d+$",)
    ),
    "rgbd": Run(
        "docs/depth_and_reconstruction.md",
        ("rec = reconstruct(colors, depth=depths, intrinsics=K)",),
        shows=(r"5/5 frames registered, method=rgbd", r"camera span 0\.16 m", r"^\[ ?0\.16 +-?0\. +-?0\. *\]$"),
    ),
    "sfm": Run(
        "docs/depth_and_reconstruction.md",
        ("rec = reconstruct(small, depth=None)",),
        shows=(r"^sfm 6$", r"^frame 1: registered \("),
        slow=True,
    ),
    # ---- docs/frames.md ------------------------------------------------------------------------------
    "frames": Run(
        "docs/frames.md",
        (
            "frames = load_images(paths)",
            'with av.open("clip.mp4", "w")',
            "frame = eight[2]",
            'load_frames({"kind": "video"',
        ),
        shows=(
            r"^Frames\(5 frames, indices \[0, 1, 2, 3, 4\], 640x480, 5 files in '.*/color'\)$",
            r"^2 Frame\(index=3, 640x480, source='00003\.jpg'\)$",
            r"^Frames\(8 frames, indices \[0, 43, 85, 128, 171, 214, 256, 299\], times 0\.00\.\.9\.97 s, video 30\.00 fps",
            r"^Frame\(index=128, time=4\.27s, 320x240, source='clip\.mp4'\)$",
            r"^171$",
        ),
    ),
    # ---- docs/geometry.md: one script, each block building on the ones before -------------------------
    "geometry": Run(
        "docs/geometry.md",
        (
            "def render(pose)",
            "T = geom.gravity_alignment(depths, poses",
            "def box_points(center, size",
            "d = geom.direction(chair, table, camera0)",
            "rect = geom.rectify_plane(photo, quad",
            "plane = geom.find_plane_reference(desk",
            "color_names_table().splitlines()[3]",
            "door = geom.scale_from_known_size",
            "scene.add_camera(0, camera0)",
            "seat = room.add_from_mask",
            'layout.add_bearing("sofa"',
            "rooms.link_views(",
            "floor_scene = Scene()",
            "z = zoom(frame, (300, 100, 400, 180))",
            "m = motion([pan(0), pan(8), pan(16)]",
            "sweep = motion([pan(0), pan(8), pan(16), pan(8), pan(0)]",
            "tilt = geom.camera_tilt(blank, K=K, known=",
        ),
        shows=(
            r"^6\.4 mm$",
            r"^Plane\(normal=\[0\.0, 0\.0, 1\.0\], offset=1\.2006 m,",
            r"^\[0\.1 0\.  0\. \]$",
            r"^1\.364\n0\.45\n",
            r"^the chair is 1\.3 m left of, 0\.40 m behind and 0\.10 m above the table$",
            r"^0\.3637$",
            r"^length 0\.176\d+ ± 0\.000\d+ m$",
            r"^\(30, 20, 50, 40\)$",
            r"^length 1\.000 ± 0\.031 m$",
            r"^SceneObject\(seat: 0\.46 m long x 0\.22 m wide x 0\.00 m tall, centre \(-0\.05, 2\.32, -0\.75\) m,",
            r"^seat top 0\.45 m above the floor$",
            r"^- view 11: heading 92°",
            r"^the lamp is SE of the door \(compass bearing 114° ± \d+°",
            r"^camera pitch -12\.0 ± 5\.4 deg \(looks down 12\.0 deg\), roll \+0 deg \(from 8 vertical edges\)$",
            r"^floor point of pixel \(40\.0, 140\.0\) at \(-1\.12, 2\.79, -1\.50\) m ± \(.*\): 3\.36 ± 0\.90 m from",
            r"^\[-0\.9   2\.23 -1\.2 \] \[-0\.92  2\.16 -1\.2 \]$",
            r"^front-right 26$",
            r"^Blob\(centroid=\(485\.84, 273\.00\) px, area=11229 px\^2, box=\(424, 219, 543, 331\)",
            r"pans right 8\.0 deg per step \(median\), with no measurable translation",
            r"^\[ 0\.  8\. 16\.  8\.  0\.\]\nTrue 0\nFalse \['top', 'middle', 'bottom'\]\n\(100, 60, 130, 90\) 0\.030\nFalse$",
            r"^-20\.5 ± 2\.5 deg, camera 1\.42 m \(solved\)\nthe known height also fits pitch -70\.8 ± [\d.]+ deg "
            r"\(a camera looking steeply down at the object right below it\)\n130\.0 40\.0 right-and-towards the camera\n"
            r"\(120, 40, 150, 80\) 0\.15$",
        ),
    ),
    # ---- docs/kernel.md, docs/security.md, docs/design.md ---------------------------------------------
    "kernel": Run(
        "docs/kernel.md",
        ('frames=FrameSpec.video("kitchen.mp4", fps=2)',),
        inputs=("kitchen.mp4",),
        shows=(
            r"^ok Frames\(6 frames, indices \[0, 5, 10, 15, 20, 25\]",
            r"\[\('start.*', 'show'\), \('end.*', 'show'\)\]$",
        ),
    ),
    "kernel-pools": Run(
        "docs/kernel.md",
        ("with KernelPool(size=2) as pool:", "with KernelPool(size=2, fresh=True, spares=2)"),
        inputs=("a.jpg",),
    ),
    "security-pool": Run(
        "docs/security.md", ("with KernelPool(size=4, fresh=True, spares=2)",), inputs=("a.jpg",), slow=True
    ),
    "security-probes": Run(
        "docs/security.md",
        ('sandbox="required"',),
        shows=(r"^\{'mode': 'required', 'active': True\}\nFileNotFoundError\nConnectionRefusedError\nMemoryError$",),
    ),
    "design-own-primitive": Run("docs/design.md", ("def mean_brightness(image",), shows=(r"^200\.0$",)),
    # ---- docs/mcp.md, docs/sessions.md, docs/notebook.md ----------------------------------------------
    "mcp-client": Run("docs/mcp.md", ("async def main() -> None:",), output="text step 1 (ok)"),
    "sessions": Run(
        "docs/sessions.md",
        ("export SPATIALCLAW_SESSIONS=$(mktemp -d)", "session = start_session(task)"),
        output="centroid x per frame: [14.5, 44.5]",
        shows=(r"^state: answered", r"closed after 2 step\(s\)", r"^True\nclosed$"),
    ),
    "notebook-load": Run("docs/notebook.md", ("%load_ext spatialclaw\n",), notebook=True),
    "notebook-try-it": Run(
        "docs/notebook.md",
        (
            'image.save(f"frame{i}.png")\n%load_ext spatialclaw',
            "%spatial_load frame0.png frame1.png",
            "show(frames[0], frames[1])  # inline images",
            "server = ScriptedProvider(",
            "%%spatialclaw --model $model",
            "print(xs, spatialclaw_result.answer",
        ),
        notebook=True,
        shows=(
            r"\*\*Step 1\*\* — Let me find the box in both frames\.",
            r"^\[14\.5, 44\.5\]$",
            r"^\[14\.5, 44\.5\] B ",
        ),
    ),
    # ---- docs/models.md -------------------------------------------------------------------------------
    "models-keys": Run(
        "docs/models.md", ('os.environ["LOCAL_VLLM_API_KEY"] = "sk-local"',), shows=(r"^\[None, 'Bearer sk-local'\]$",)
    ),
    "models-prices": Run(
        "docs/models.md",
        ('set_price("my-finetune"',),
        env=(("OPENAI_API_KEY", "sk-placeholder-never-sent"),),  # load_model asks for a key; the block calls nothing
    ),
    "models-local-server": Run("docs/models.md", ("rate_limited(retry_after=1)",), shows=(r"^hello 2$",)),
    # ---- docs/trajectories.md (the synthetic run as written, against the answering server) --------------
    "trajectories": Run(
        "docs/trajectories.md",
        (
            "--limit 4 --model openai:gpt-4.1 --out runs/demo",
            "for step in episode_steps(episode):",
            "--format openai   --in runs/demo",
            "$ spatialclaw replay runs/demo/",
            "spatialclaw view runs/demo\n",
        ),
        server=True,
        shows=(r"^answer\(2\.869\)\n``` ok$", r"openai: exported 4 of 4 episode", r"^runs/demo/index\.html$"),
        slow=True,
    ),
    "trajectories-rl-env": Run(
        "docs/trajectories.md", ("with SpatialEnv(max_steps=4",), shows=(r"^reward 1\.0 logged to ",)
    ),
    "trajectories-recipe-sft": Run(
        "docs/trajectories.md",
        ("MODEL=${MODEL:-HuggingFaceTB/SmolVLM-256M-Instruct}", "trainer = SFTTrainer("),
        tiny_models=True,  # the run is the keyless scripted:solve-synthetic, as written: no server
        shows=(r"trl: exported [1-4] of 4 episode", r"0 row\(s\) over 8192 tokens", r"'train_loss'"),
        slow=True,
    ),
    # ---- docs/errors.md, docs/perception.md ------------------------------------------------------------
    "errors": Run(
        "docs/errors.md",
        ("$ spatialclaw run --model openai:gpt-4.1 --video room.jpg",),
        inputs=("room.jpg", "a.jpg", "notes/todo.txt"),
    ),
    "perception-track": Run(
        "docs/perception.md",
        ('track(frames, masks=patch, method="flow")',),
        shows=(r"^round trip error \(px\): 0\.0$",),
    ),
}

SKIPPED: dict[tuple[str, str], str] = {
    ("README.md", "spatialclaw/          host side"): "the layout of the tree, not a command",
    ("CONTRIBUTING.md", "bash scripts/test.sh"): "the test suite itself (about 10 min), of which this test is part",
    ("CONTRIBUTING.md", "bash scripts/test.sh --latest"): (
        "re-resolves today's newest releases from the registries, rewrites the lock and runs the whole suite twice"
    ),
    ("CONTRIBUTING.md", "benchmarks/perf/mutation.py --module limits"): (
        "takes > 2 min: cosmic-ray runs every mutant against the module's tests"
    ),
    ("docs/benchmarks.md", '{"task_id": "kitchen-1"'): "a data file's format (JSON Lines), not a command",
    ("docs/benchmarks.md", '[project.entry-points."spatialclaw.benchmarks"]'): (
        "a package's pyproject.toml, not a command; tests/commands/test_entry_points.py installs such an entry point"
    ),
    ("docs/benchmarks.md", "spatialclaw data download paper --root ROOT"): (
        "needs the network and an API key: downloads the paper's 20 benchmarks from the hub, then calls openai:gpt-4.1"
    ),
    ("docs/benchmarks.md", "python -m spatialclaw.benchmarks.devset dev"): (
        "needs the project's real data folder (SPATIALCLAW_TEST_DATA, as the block says); "
        "tests/benchmarks/devset/test_devset.py runs it where that folder exists"
    ),
    (
        "docs/benchmarks.md",
        "RUN/manifest.json      spatialclaw version",
    ): "the layout of a run directory, not a command",
    ("docs/benchmarks.md", "--workers 64 --executor ray --ray-address auto --episode-timeout 900"): (
        "needs a Ray cluster, a vLLM server at http://vllm:8000 and VSI-Bench's media (~/data/vsi)"
    ),
    ("docs/benchmarks.md", "--perception-actors 4 --perception-gpus 1"): (
        "needs a Ray cluster with GPUs, a vLLM server at http://vllm:8000 and VSI-Bench's media (~/data/vsi)"
    ),
    ("docs/benchmarks.md", "start_perception_service(actors=1, num_gpus=0)"): (
        "needs hub weights (depth-anything-indoor, in the Ray actor); tests/services/test_perception_run.py runs it with "
        "a tiny saved model in their place"
    ),
    ("docs/depth_and_reconstruction.md", "d = depth(frames[0])  # default model"): (
        "needs hub weights (the depth model), and it lists a result's fields on kernel names (frames, some_mask)"
    ),
    ("docs/depth_and_reconstruction.md", "huggingface-cli download depth-anything/"): (
        "needs the network (a hub download) and the user's own folders"
    ),
    ("docs/depth_and_reconstruction.md", 'load_model("zero-shot-object-detection"'): (
        "needs hub weights (Depth-Anything-V2 and OWLv2)"
    ),
    ("docs/depth_and_reconstruction.md", "rec = reconstruct(frames.sample(count=16))"): (
        "a listing of a Reconstruction's fields on kernel names (frames, show); the RGB-D and SfM examples "
        "after it are run"
    ),
    ("docs/depth_and_reconstruction.md", "python -m spatialclaw.primitives.reconstruction.da3_service"): (
        "needs a GPU and depth-anything-3 with its weights in an environment of its own"
    ),
    ("docs/design.md", "cli.py, commands/          the command line"): "the layout of the tree, not a command",
    ("docs/design.md", "Task(frames, question, choices, meta) ──► Kernel"): "a diagram, not a command",
    ("docs/geometry.md", ".venv/bin/python -m pytest tests/primitives/geometry/test_geom.py"): (
        "runs test files of the suite this test belongs to, not an example"
    ),
    ("docs/mcp.md", '"mcpServers": {'): "a client's configuration file, not a command",
    ("docs/models.md", 'extra_body={"top_k": 20}, max_tokens=2048'): (
        "needs a model server at http://localhost:8000/v1 (vLLM) and the user's `image`; the keyless "
        "'Testing against a local server' block runs the same calls"
    ),
    ("docs/perception.md", "Detections(2 instances in frame 30 via grounding-dino-tiny"): (
        "the printout of a detection on the user's frames: output, not a command (and it needs hub weights)"
    ),
    ("docs/perception.md", 'chairs = detect(frames[3], "chair")'): (
        "needs hub weights (detection, SAM) and runs on kernel names (frames, show)"
    ),
    ("docs/perception.md", "spatialclaw serve da3 --env ~/services/da3 --device cuda"): (
        "needs a GPU and depth-anything-3 with its weights (the service's own environment)"
    ),
    ("docs/perception.md", "$ python benchmarks/perf/gpu_perception.py --quick"): (
        "a speed measurement's printout: its timings are the machine's, not a transcript to match"
    ),
    ("docs/sessions.md", "spatialclaw session start ──► python -m spatialclaw.interactive.daemon"): (
        "a diagram, not a command"
    ),
    ("docs/trajectories.md", "trainer = GRPOTrainer("): (
        "takes > 2 min on a CPU (GRPO rollouts, even with the tiny policy); tests/docs/test_docs_training.py runs it "
        "to its first training step with `spatialclaw tiny-models`"
    ),
}
