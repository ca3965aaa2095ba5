"""Model inputs, constants, outputs and state: Parameter, Const, Result, ReadValue, Assign."""
