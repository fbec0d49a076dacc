"""The model-in-the-loop dev set: real-image spatial questions with exact ground truth (:mod:`.build`), one
module per family of question classes, the real data they are built from, and the harness that scores a
model on them (:mod:`.evaluate`)."""
