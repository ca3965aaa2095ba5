"""``python -m ir_runner`` is the ``ir-run`` command."""

from .cli import main

main()
