"""Trajectories to training data: OpenAI fine-tuning JSONL, TRL datasets, LLaMA-Factory ShareGPT, verl
parquet and Jupyter notebooks.

Every exporter reads only the native episode format (:mod:`spatialclaw.trajectories.episode_log`) and maps an episode
to turns once, in :mod:`spatialclaw.export.conversation`; :func:`export_episodes` finds, filters and
writes. See ``docs/trajectories.md`` for the mapping per format.
"""

from spatialclaw.export.conversation import Conversation, Turn, episode_conversation
from spatialclaw.export.runner import FORMATS, ExportReport, ExportStats, export_episodes

__all__ = ["FORMATS", "Conversation", "ExportReport", "ExportStats", "Turn", "episode_conversation", "export_episodes"]
