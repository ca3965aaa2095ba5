"""The project's scripts (benchmarks, fuzzers, generators of committed data): see scripts/README.md. Run
them from the repository root as modules, ``python -m scripts.NAME``, so that they import ``tests.helpers``
and each other as they are."""
