"""Convolution and pooling: Convolution (grouped, transposed, deformable), MaxPool, AvgPool, Adaptive*Pool, Col2Im."""
