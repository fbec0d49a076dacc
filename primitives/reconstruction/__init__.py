"""Reconstruction: multi-view poses and points from RGB, RGB-D, two views and stereo."""
