import pathlib
import sys

# tests/harness.py (real processes, free ports, redis-server) lives in the repository's tests/.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tests"))
