"""A matplotlib backend for the kernel: ``plt.show()`` and figures left open at the end of a cell are
published as PNG images (origin ``"plt.show"`` or ``"figure"``) and then closed.

Selected with ``MPLBACKEND=module://spatialclaw.primitives.display.mpl_backend`` in the kernel's environment.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from matplotlib._pylab_helpers import Gcf
from matplotlib.backend_bases import _Backend
from matplotlib.backends.backend_agg import _BackendAgg

from spatialclaw.primitives.display.show import publish_png
from spatialclaw.primitives.imaging import png_size

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def figure_png(figure: Figure) -> tuple[bytes, int, int]:
    """Render a figure to PNG at its own DPI; returns (bytes, width px, height px)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", pil_kwargs={"compress_level": 1})
    png = buffer.getvalue()
    return (png, *png_size(png))


def flush_figures(origin: str) -> int:
    """Publish every open figure that has something drawn, close them all, return how many were published."""
    import matplotlib.pyplot as plt

    published = 0
    for manager in Gcf.get_all_fig_managers():
        figure = manager.canvas.figure
        if figure.axes or figure.images or figure.patches or figure.texts or figure.lines:
            png, width, height = figure_png(figure)
            label = figure.get_suptitle() or (figure.axes[0].get_title() if figure.axes else "") or None
            publish_png(png, width, height, label, origin)
            published += 1
    plt.close("all")
    return published


@_Backend.export
class _BackendSpatialclaw(_BackendAgg):
    @staticmethod
    def show(block: bool | None = None) -> None:
        flush_figures("plt.show")
