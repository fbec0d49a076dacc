"""Scene memory: named 3D objects, relations, perspective taking and layouts from bearings."""
