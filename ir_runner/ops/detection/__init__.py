"""Object detection: NonMaxSuppression, ROIAlign, ROIPooling, PSROIPooling, PriorBox, RegionYolo, ReorgYolo,
DetectionOutput."""
