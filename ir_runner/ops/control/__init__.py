"""Control flow with bodies: If, Loop, TensorIterator."""
