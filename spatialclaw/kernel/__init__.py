"""The kernel layer: one sandboxed IPython process per episode, its side channels, pools and cell results."""
