"""Image resampling and colour: Interpolate, GridSample, NV12/I420 to RGB/BGR."""
