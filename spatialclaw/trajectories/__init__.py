"""Trajectories: the episode log (writer, reader), the run directory and its results, and the viewers that read them."""
