"""Methods the model applies by eye where no tool measures honestly: ``manual("facing")`` prints one.

Each guide says why there is no tool, then the method, short and exact."""

from __future__ import annotations

__all__ = ["GUIDES"]

GUIDES = {
    "facing": """\
Which way an object, person or animal FACES: no tool measures it here (no orientation model's weights on this
machine; symmetry or edges alone cannot tell front from back). Judge it from the images, say how sure you are:
- Front features decide: eyes, face, beak, headlights, a screen, drawer or oven doors, a chair's seat edge are
  on the front. Both eyes (or both headlights) visible: it faces the camera; one eye, a profile: it faces the
  side its nose / beak / bonnet points to; only the back of the head or the tail lights: it faces away.
- A symmetric object's mirror axis in the image is its facing line; the front features say which end leads.
- Furniture: a chair or sofa faces away from its backrest; a bed from its headboard to its foot; a TV,
  monitor or oven faces its screen or door side.
- Moving animals and vehicles face the way they move (a reversing car is the exception):
  motion(frames, object=box) gives that direction with the camera's motion removed.
- As a heading on the ground from the camera's view (motion's object_heading_deg): 0 = facing away from the
  camera, 90 = towards the camera's right, 180 = towards the camera, -90 = towards its left.""",
}
