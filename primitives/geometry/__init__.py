"""Geometry: cameras, transforms, planes, floors, boxes, relations and planar metrology (the kernel's ``geom``)."""
