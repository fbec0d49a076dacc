"""Frames: input images and video frames with their absolute source indices."""
