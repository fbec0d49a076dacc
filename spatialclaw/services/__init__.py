"""Host services that kernels reach through the relay: the shared perception actors, backends in their own
environments (``spatialclaw serve``, or Ray actors of a run) and the local HTTP server."""
