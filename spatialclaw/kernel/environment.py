"""The environment a kernel process starts with: an allow list of the host's variables, never a secret.

Only variables a kernel needs pass (:data:`ALLOWED` by name, :data:`ALLOWED_PREFIXES` by prefix): the
search path, locale and time zone, Python's own switches, thread counts of the numeric libraries, GPU
selection, model-cache locations and offline switches, and ``SPATIALCLAW_*`` settings. Everything else
(``DATABASE_URL``, ``KAGGLE_KEY``, ``SLACK_WEBHOOK_URL``, whatever a host keeps) stays in the host process,
and a name that looks like a credential (:func:`is_secret`) never passes, not even from the allow list or
from ``extra``. Values are scrubbed too (:func:`scrub_value`): a URL's user and password
(``https://alice:secret@host`` becomes ``https://host``), wherever in the value it stands. API keys live in
the host process only; ``vlm.*`` calls from the kernel are routed back to the host.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = [
    "ALLOWED",
    "ALLOWED_PREFIXES",
    "allowed_environment",
    "is_allowed",
    "is_secret",
    "kernel_environment",
    "scrub_value",
]

_SECRET = re.compile(
    r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|_PASS$|^PASS_|_PASS_|DSN|_PWD$|^PWD_|CREDENTIAL"
    r"|PRIVATE_KEY|AUTH|WEBHOOK|_PAT$|_KEY$)",
    re.IGNORECASE,
)
_SECRET_PREFIXES = (
    "AWS_",
    "AZURE_",
    "GOOGLE_APPLICATION",
    "OPENAI_",
    "ANTHROPIC_",
    "GEMINI_",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s]*@")
"""``scheme://user:password@`` in a value: the user part is dropped (a URL keeps its host and path)."""
_NOT_SECRET = frozenset({"RAY_AUTH_MODE"})  # settings whose names look like credentials but hold none

#: Host variables a kernel receives by exact name (HOME and TMPDIR are rewritten inside the sandbox).
ALLOWED = frozenset(
    {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "USER",
        "LOGNAME",
        "LD_LIBRARY_PATH",
        "PYTHONPATH",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONNOUSERSITE",
        "PYTHONWARNINGS",
        "PYTHONFAULTHANDLER",
        "NUMEXPR_NUM_THREADS",
        "NUMEXPR_MAX_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "TOKENIZERS_PARALLELISM",
        "HF_HOME",
        "HF_HUB_CACHE",
        "HF_HUB_OFFLINE",
        "HF_DATASETS_OFFLINE",
        "HF_ENDPOINT",
        "HF_HUB_DISABLE_TELEMETRY",
        "TRANSFORMERS_OFFLINE",
        "TRANSFORMERS_CACHE",
        "TORCH_HOME",
        "RAY_ADDRESS",
    }
)
#: Host variables a kernel receives by prefix: locale, thread pools, GPU selection, torch and spatialclaw.
ALLOWED_PREFIXES = ("LC_", "OMP_", "MKL_", "OPENBLAS_", "KMP_", "CUDA_", "NVIDIA_", "PYTORCH_", "SPATIALCLAW_")


def is_secret(name: str) -> bool:
    """True for variables that hold credentials (``*_API_KEY``, ``*TOKEN*``, ``*_PWD``, ``*_PASS``,
    ``*PASSPHRASE*``, ``*DSN*``, ``AWS_*``...), whatever their case (``my_api_key`` is one)."""
    if name.upper() in _NOT_SECRET:
        return False
    return bool(_SECRET.search(name)) or name.upper().startswith(_SECRET_PREFIXES)


def is_allowed(name: str) -> bool:
    """True for host variables a kernel may receive: on the allow list and not a secret."""
    return (name in ALLOWED or name.startswith(ALLOWED_PREFIXES)) and not is_secret(name)


def scrub_value(value: str) -> str:
    """``value`` without the user information of any URL in it (``http://bob:tok@vllm:8000/v1`` ->
    ``http://vllm:8000/v1``), also inside a longer value such as a model spec."""
    return _USERINFO.sub(lambda match: match["scheme"], value)


def allowed_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowed variables of ``base`` (default: this process's environment), values scrubbed: what a
    kernel, or a backend service the host starts, may inherit from the host."""
    return {k: scrub_value(v) for k, v in (base if base is not None else os.environ).items() if is_allowed(k)}


def kernel_environment(extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowed variables of ``base`` (default: this process's environment), plus ``extra`` (what the
    caller passes on purpose; secrets are still dropped).

    Sets the matplotlib backend that turns ``plt.show()`` into observation images.
    """
    env = allowed_environment(base)
    env["MPLBACKEND"] = "module://spatialclaw.primitives.display.mpl_backend"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env.setdefault("PYTHONUNBUFFERED", "1")
    if extra:
        env.update({k: scrub_value(v) for k, v in extra.items() if not is_secret(k)})
    return env
