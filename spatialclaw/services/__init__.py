"""Host services that kernels reach through the relay: the shared perception actors and the local HTTP server."""
