"""Fetch the chat loop's pinned ACP agent for an image: the native codex-acp binary.

    python fetch_codex_acp.py services/bridge/acp/package-lock.json /opt/codex-acp

The version and the sha512 come from the lockfile (`npm ci` would install the same file); the
platform package (@zed-industries/codex-acp-linux-x64 / -arm64) is downloaded from the npm
registry and refused unless its sha512 matches. No Node.js is needed: the bridge starts the
native binary directly (services/bridge/src/mcb_bridge/chat/config.py). Used by the `chat`
target of the Dockerfile.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import platform
import sys
import tarfile
import urllib.request
from pathlib import Path

PACKAGE = "@zed-industries/codex-acp"
ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def main(lockfile: str, dest: str) -> int:
    arch = ARCH.get(platform.machine().lower())
    if arch is None:
        print(f"fetch_codex_acp: no codex-acp build for {platform.machine()}", file=sys.stderr)
        return 1
    name = f"{PACKAGE}-linux-{arch}"
    entry = json.loads(Path(lockfile).read_text())["packages"][f"node_modules/{name}"]
    version, integrity = entry["version"], entry["integrity"]
    algo, _, want = integrity.partition("-")
    assert algo == "sha512", integrity
    base = name.split("/")[1]
    registry = os.environ.get("NPM_CONFIG_REGISTRY", "").rstrip("/")
    if not entry.get("resolved") and not registry:
        print(
            "fetch_codex_acp: no npm registry: set NPM_CONFIG_REGISTRY (compose: MCB_NPM_REGISTRY, e.g. the"
            " output of `npm config get registry` on the machine)",
            file=sys.stderr,
        )
        return 1
    url = entry.get("resolved") or f"{registry}/{name}/-/{base}-{version}.tgz"
    with urllib.request.urlopen(url, timeout=300) as r:
        data = r.read()
    got = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if got != want:
        print(f"fetch_codex_acp: {url}: sha512 {got} is not the lockfile's {want}", file=sys.stderr)
        return 1
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        member = tar.getmember("package/bin/codex-acp")
        src = tar.extractfile(member)
        assert src is not None
        (out / "codex-acp").write_bytes(src.read())
    (out / "codex-acp").chmod(0o755)
    (out / "VERSION").write_text(f"{name} {version}\n")
    print(f"fetch_codex_acp: {name} {version} -> {out / 'codex-acp'} (sha512 checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
