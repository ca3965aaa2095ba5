"""The operations ir-run implements; importing this package registers them all."""

from . import convert, gather, io, select  # noqa: F401
from .registry import find_op, supported_ops

__all__ = ["find_op", "supported_ops"]
