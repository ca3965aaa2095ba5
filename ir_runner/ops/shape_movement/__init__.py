"""Shape and data movement: ShapeOf, Reshape, Squeeze, Unsqueeze, Concat, Split, Transpose, Broadcast, Tile, Slice,
StridedSlice, Pad, Reverse, Roll, space/depth/batch rearrangements, ReverseSequence, SliceScatter."""
