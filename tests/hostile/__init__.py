"""The hostile corpus: broken and malicious IRs, each with the one outcome ir-run must give it.

``CASES`` is built in Python (nothing large is stored); ``scripts/make_hostile.py`` writes it to a
directory with a manifest, and ``tests/test_hostile.py`` runs every case through the API and the CLI.
"""

from .case import SECRET_PLACEHOLDER, Case, Materialized, materialize
from .model_cases import model_cases
from .op_cases import fold_bomb, op_cases
from .xml_cases import xml_cases

CASES: list[Case] = xml_cases() + model_cases() + op_cases()
_names = [case.name for case in CASES]
assert len(set(_names)) == len(_names), "hostile case names must be unique"

__all__ = ["CASES", "SECRET_PLACEHOLDER", "Case", "Materialized", "fold_bomb", "materialize"]
