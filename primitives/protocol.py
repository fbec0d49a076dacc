"""Names shared by the kernel side and the host side of the Jupyter connection.

The host never imports the kernel's code to talk to it; these constants are the whole vocabulary of
the private messages the runtime publishes on the IOPub channel as ``display_data`` MIME bundles.
"""

ANSWER_MIME = "application/vnd.spatialclaw.answer+json"
"""Published by ``answer(value)``: ``{"value": normalised answer, "raw": repr of the argument}``."""

STATE_MIME = "application/vnd.spatialclaw.state+json"
"""Published after every cell: ``{"variables": [...], "names": [...], "error": {...} | None, "snapshot": {...}}``."""

IMAGE_METADATA_KEY = "spatialclaw"
"""Key in an image's display metadata holding ``{"label": str | None, "origin": str}``."""

RUNTIME_NAME = "__spatialclaw_runtime__"
"""Name of the runtime object in the kernel's hidden namespace."""
