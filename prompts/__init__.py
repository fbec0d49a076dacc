"""Prompt templates: plain text/markdown files with ``$placeholders`` (see :mod:`spatialclaw.agent.prompting`).

``VERSION`` is recorded in every trajectory header (with a hash of the templates' text): bump it whenever
the wording of a template changes, because training data and benchmark results depend on it.
"""

VERSION = "5"
