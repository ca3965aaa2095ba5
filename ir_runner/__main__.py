"""``python -m ir_runner`` is the ``ir-run`` command."""

from .cli import main

if __name__ == "__main__":  # the processes scheduler re-imports the main module in its workers
    main()
