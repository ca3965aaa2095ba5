"""The ``ir-run`` command line: a thin shell over the library (``commands``: the group; ``cmd_*``: one per command).

``ir-run MODEL.xml --input a.npy ...`` runs a model (``run`` is the default command); ``validate``,
``inspect``, ``compare``, ``bench``, ``gen-inputs``, ``replay`` and ``completion`` do the rest. An
IRError is printed as one paragraph on stderr, without a traceback, and sets the exit code.
"""

from .commands import cli, main

__all__ = ["cli", "main"]
