"""Motion: feature matching, two-frame camera motion and the ``motion`` readout over key frames."""
