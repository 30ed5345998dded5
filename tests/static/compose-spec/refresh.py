"""Re-derive the vendored Compose schema from the npm package that ships it (see PROVENANCE.md).

    python tests/static/compose-spec/refresh.py --check            # compare, change nothing
    python tests/static/compose-spec/refresh.py --version 3.1.0    # replace compose-spec.json

Needs `npm` and access to the npm registry. Not run by the test suite.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENDORED = HERE / "compose-spec.json"
PACKAGE = "dclint"
MEMBER = "package/schemas/compose.schema.json"


def fetch(version: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["npm", "pack", f"{PACKAGE}@{version}", "--silent"],
            cwd=tmp,
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
        tgz = Path(tmp) / out.stdout.strip().splitlines()[-1]
        with tarfile.open(tgz) as tar:
            f = tar.extractfile(MEMBER)
            if f is None:
                raise SystemExit(f"{PACKAGE}@{version} has no {MEMBER}")
            return f.read()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default="3.1.0", help="dclint version (default: the vendored one)")
    ap.add_argument("--check", action="store_true", help="only compare with the vendored file")
    args = ap.parse_args()
    data = fetch(args.version)
    digest = hashlib.sha256(data).hexdigest()
    if args.check:
        same = VENDORED.read_bytes() == data
        print(
            f"{PACKAGE}@{args.version} {MEMBER}: sha256 {digest}: "
            f"{'identical to' if same else 'DIFFERS from'} {VENDORED.name}"
        )
        return 0 if same else 1
    VENDORED.write_bytes(data)
    print(f"wrote {VENDORED} from {PACKAGE}@{args.version}, sha256 {digest}; update PROVENANCE.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
