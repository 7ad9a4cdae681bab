"""Make `hostile_upstream` importable from this directory's tests.

The suite runs with `--import-mode=importlib`, which puts no test directory on sys.path.
"""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
