"""File-system rules of a run directory, in one place.

- ids are data, never paths: ``id_file_name`` turns any id into a safe, collision-free file name;
- ``safe_join`` joins parts under a root and refuses a result outside it (``..``, absolute parts, symlinks out);
- ``atomic_write`` / ``atomic_path``: a unique temp file in the target's folder, fsync, ``os.replace``; a reader
  never sees a half-written file under the final name, and two writers never share a temp name;
- ``RunLock``: one writer per run directory (``RUN/.lock``, flock), re-entrant within a process; the file names the
  holder's command with secrets hidden (``redacted_argv``) and is removed when the last holder lets go.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import sys
import tempfile
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from halluscope.core.errors import HalluscopeError
from halluscope.core.hashing import sha256_hex

LOCK_NAME = ".lock"
# flags whose value is a secret (--token, --api-key, --hf-token ...): never written to a file or a log
_SECRET_FLAG = re.compile(r"^--?(?:[\w-]*[-_])?(?:token|key|secret|password|passwd)$", re.I)


def redacted_argv(argv: list[str]) -> list[str]:
    """``argv`` with the value of every secret-looking flag (``--token T``, ``--token=T``) replaced by REDACTED."""
    out: list[str] = []
    hide = False
    for a in argv:
        if hide:
            out.append("REDACTED")
            hide = False
            continue
        flag, eq, _ = a.partition("=")
        if _SECRET_FLAG.match(flag):
            out.append(f"{flag}=REDACTED" if eq else a)
            hide = not eq
            continue
        out.append(a)
    return out


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SLUG_MAX = 40


class PathEscapeError(HalluscopeError):
    """A path built from user data would leave the folder it belongs in."""


class RunBusyError(HalluscopeError):
    """Another process holds the run directory's lock."""


def id_file_name(item_id: str, suffix: str = "") -> str:
    """A file name for ``item_id``: a readable ASCII slug plus 16 hex digits of the id's sha256.

    Safe on every file system ('../x', '/abs', 'a/b', '..', 'con', 1,000 characters all give a plain name), and
    ids that differ only by case or Unicode normal form get different names (the digest is over the exact id).
    """
    digest = sha256_hex(item_id.encode("utf-8", "surrogatepass"), 16)
    ascii_ = unicodedata.normalize("NFKD", item_id).encode("ascii", "ignore").decode("ascii")
    slug = _UNSAFE.sub("_", ascii_).strip("._-")[:_SLUG_MAX].rstrip("._-")
    return f"{slug}-{digest}{suffix}" if slug else f"{digest}{suffix}"


def safe_join(root: str | Path, *parts: str | Path) -> Path:
    """``root/parts...`` resolved (symlinks followed); PathEscapeError when the result is not inside ``root``."""
    base = Path(root).resolve()
    target = base.joinpath(*parts).resolve()
    if target != base and not target.is_relative_to(base):
        shown = "/".join(str(p) for p in parts)
        raise PathEscapeError(
            f"path '{shown}' leaves {base} (it resolves to {target}); expected a path inside it. Fix: a record or "
            "input names a file with '..', an absolute path or a symbolic link out of the folder; remove it"
        )
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A fresh temp path beside ``path`` to write to; on success it is fsynced and renamed to ``path``.

    The temp name is unique (``.<name>.<random>.tmp``), so concurrent writers of one file never collide; on an
    exception the temp file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:60]}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, _MODE)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, data: bytes | str, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` atomically (see atomic_path); text is encoded with ``encoding``."""
    blob = data.encode(encoding) if isinstance(data, str) else data
    with atomic_path(path) as tmp:
        tmp.write_bytes(blob)
    return Path(path)


class RunLock:
    """An exclusive flock on RUN/.lock for as long as any Store of this process has RUN open.

    A second process gets RunBusyError naming the holder (pid, command, since when); the lock goes away with its
    holder, even after kill -9, so a stale .lock file never blocks a run.
    """

    _held: dict[Path, list[int]] = {}  # resolved run dir -> [fd, open count]
    _mutex = threading.Lock()

    def __init__(self, run_dir: str | Path) -> None:
        self.key = Path(run_dir).resolve()
        self.acquired = False

    def acquire(self) -> RunLock:
        with self._mutex:
            held = self._held.get(self.key)
            if held is not None:
                held[1] += 1
                self.acquired = True
                return self
            path = self.key / LOCK_NAME
            while True:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise RunBusyError(
                        f"{self.key} is in use by {holder}; wait for it to finish or use another run directory"
                    ) from None
                try:  # the holder before us may have removed the file after we opened it: lock the current one
                    if os.stat(path).st_ino == os.fstat(fd).st_ino:
                        break
                except FileNotFoundError:
                    pass
                os.close(fd)
            os.ftruncate(fd, 0)
            info = {
                "pid": os.getpid(),
                "command": shlex.join(["halluscope", *redacted_argv(sys.argv[1:])])[:300],
                "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
            os.write(fd, json.dumps(info).encode())
            self._held[self.key] = [fd, 1]
            self.acquired = True
            return self

    def release(self) -> None:
        if not self.acquired:
            return
        self.acquired = False
        with self._mutex:
            held = self._held.get(self.key)
            if held is None:
                return
            held[1] -= 1
            if held[1] == 0:
                del self._held[self.key]
                try:  # removed while still locked: a waiting process re-opens and locks the new file
                    (self.key / LOCK_NAME).unlink()
                except OSError:
                    pass
                os.close(held[0])  # closing the descriptor drops the flock


def _read_holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8", "replace") or "{}")
        return f"pid {info['pid']} (command: {info['command']}; since {info['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def confined(
    path: str, root: str | Path, *, file: str | Path, row: int, what: str, problems, base: str | Path | None = None
) -> Path | None:
    """An audio (or other) path named by a row of an input file, resolved (``~`` expanded, symlinks followed) and
    confined to ``root`` (relative paths are taken from ``base``, default ``root``): a file from elsewhere must not make halluscope read,
    and send to a model, files outside it. Outside: a problem naming the row, field and the fix (None), never read.
    ``what`` names the root in the message (e.g. '--audio-root', "the manifest's folder")."""
    top = Path(os.path.realpath(Path(root).expanduser()))
    p = Path(path).expanduser()
    real = Path(os.path.realpath(p if p.is_absolute() else Path(base if base is not None else top).expanduser() / p))
    if real == top or not real.is_relative_to(top):
        problems.add(
            f"audio path {path[:200]!r} resolves to {real}, outside {what} ({top}); files outside it are never read",
            row=row,
            field="audio",
            file=str(file),
            fix="put the clip under that folder and give its path relative to it, or pass the folder that "
            "holds the clips as --audio-root",
        )
        return None
    return real
