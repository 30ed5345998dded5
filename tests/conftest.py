"""Make tests/ importable (harness, e2e helpers) under --import-mode=importlib."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
