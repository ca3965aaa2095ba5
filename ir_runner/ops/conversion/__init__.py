"""Element type conversion: Convert, ConvertLike, ConvertPromoteTypes."""
