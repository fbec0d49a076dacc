"""Subcommands of the ``spatialclaw`` CLI, one module each.

A module defines ``register(subparsers)``, which adds its parser and sets ``handler=`` (a function
taking the parsed arguments and returning an exit code). Modules must import heavy things lazily,
inside their handler, so that ``spatialclaw --help`` stays fast.
"""
