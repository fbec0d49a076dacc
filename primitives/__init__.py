"""Kernel-side primitives: everything preloaded into the agent's IPython kernel.

This package runs inside the kernel. It never imports the host side (the agent loop, model clients);
it reaches the host only through the Jupyter protocol and the ``vlm`` side channel.
Importing it is cheap: heavy modules (torch, models, Open3D) load on first use.
"""
