"""The kernel runtime: the namespace, preload, state reports, snapshots, the manual and lazy entries."""
