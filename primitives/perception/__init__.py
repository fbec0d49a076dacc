"""Learned perception: depth, detection, segmentation, tracking, model loading, caching and the remote service client."""
