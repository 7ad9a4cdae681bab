"""Make `catalog_fixtures` importable from this directory's tests.

The suite runs with `--import-mode=importlib`, which puts no test directory on sys.path; the fakes must be
plain importable classes (hypothesis strategies and examples build fresh ones, which fixtures can't).
"""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
