"""docs/operations.md lists exactly the registered operations (it is generated from their declarations)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_operations_page_is_current():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "list_ops.py"), "--check"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
