"""Opening a person's existing single-player save (``mcb up --world PATH``, issue 31 item 11).

Three rules before the embedded host writes into a save it did not make:

* **Not while the game has it open.** Minecraft locks a world it opens with ``session.lock``: the
  game's ``net.minecraft.util.DirectoryLock.create`` opens ``<save>/session.lock`` (create, write),
  writes a snowman ("☃", UTF-8), forces it to disk and takes ``FileChannel.tryLock()`` — on
  Linux and macOS an ``fcntl`` record lock over the whole file — and refuses a world whose lock
  another process holds ("already locked"). ``locked_by_other`` asks for the same lock
  (``fcntl.lockf``, the same lock family; ``flock`` would not see it) and gives it back at once;
  ``SessionLock`` takes it the way the game does and holds it while the host runs, so the game in
  turn refuses to open the world while we write into it.
* **Only the game version the host writes.** ``level.dat``'s ``Data.DataVersion`` must be the
  registry's (1.21.11: 4671); an older or newer save is refused with both versions named: its
  chunks would need the game's DataFixer, which this tool does not have.
* **Backed up first** (``backup``): the whole folder, copied (``session.lock`` left out) to
  ``<runtime>/backups/<UTC time>-save-<folder name>/`` before the host opens it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from pathlib import Path
from typing import Any

from mcb_common.errors import ErrorCode, McbError

from . import level as levelmod

LOCK_FILE = "session.lock"
SNOWMAN = "☃".encode()


def check_save(path: Path, data_version: int = levelmod.DATA_VERSION) -> dict[str, Any]:
    """The save's name and versions, or a refusal naming what is wrong."""
    path = Path(path)
    if not path.is_dir():
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"{path} is not a folder; give the save's folder (e.g. ~/.minecraft/saves/My World)",
            details={"path": str(path)},
        )
    if not (path / "level.dat").is_file():
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"{path} holds no level.dat: not a Minecraft Java save folder",
            details={"path": str(path)},
        )
    try:
        info = levelmod.level_info(levelmod.read_level(path / "level.dat"))
    except McbError:
        raise
    except Exception as exc:  # a corrupt file: any parse error
        raise McbError(
            ErrorCode.INVALID_REQUEST, f"{path / 'level.dat'} is unreadable ({exc})", details={"path": str(path)}
        ) from None
    if info["dataVersion"] != data_version:
        raise McbError(
            ErrorCode.VERSION_MISMATCH,
            f"{path} was saved by Minecraft {info['minecraftVersion'] or '?'} (DataVersion {info['dataVersion']}); "
            f"this tool writes {levelmod.MINECRAFT_VERSION} (DataVersion {data_version}) only — open the world "
            f"once in Minecraft {levelmod.MINECRAFT_VERSION} (it converts it), then try again",
            details={"path": str(path), "data_version": info["dataVersion"], "expected": data_version},
        )
    return info


def locked_by_other(path: Path) -> bool:
    """Whether another process (the game) holds the save's session.lock."""
    p = Path(path) / LOCK_FILE
    try:
        fd = os.open(p, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _locked_error(path: Path) -> McbError:
    return McbError(
        ErrorCode.BUSY,
        f"Minecraft has the world {path} open ({LOCK_FILE} is locked): leave the world in the game "
        "(or stop the server using it), then start again",
        details={"path": str(path), "lock": str(Path(path) / LOCK_FILE)},
    )


class SessionLock:
    """The save's session.lock, held like the game holds it, until ``close``. (A POSIX record lock
    belongs to the process: closing *any* descriptor of the file in the host process would drop
    it, so nothing else in the host opens session.lock.)"""

    def __init__(self, path: Path):
        self.path = Path(path)
        fd = os.open(self.path / LOCK_FILE, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise _locked_error(self.path) from None
        os.pwrite(fd, SNOWMAN, 0)
        os.fsync(fd)
        self._fd: int | None = fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the file releases the record lock
            self._fd = None


def refuse_if_locked(path: Path) -> None:
    if locked_by_other(path):
        raise _locked_error(Path(path))


def backup(path: Path, backups: Path, now: float | None = None) -> Path:
    """Copy the save to ``backups/<UTC time>-save-<folder name>/`` (session.lock left out)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() if now is None else now))
    dest = Path(backups) / f"{stamp}-save-{Path(path).name}"
    n = 1
    while dest.exists():
        n += 1
        dest = Path(backups) / f"{stamp}-save-{Path(path).name}-{n}"
    Path(backups).mkdir(parents=True, exist_ok=True)
    shutil.copytree(path, dest, ignore=shutil.ignore_patterns(LOCK_FILE), symlinks=True)
    return dest
