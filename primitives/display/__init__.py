"""Display: show(), zoomed crops, overlays, contact sheets, colour blobs and the matplotlib backend."""
