"""Input safety checks before reading a transcript (DESIGN.md "Transcript formats": input safety).

Refuse symlinks, enforce an optional trusted root (``DUCK_TAPE_TRUSTED_ROOT``) and a size cap
(``DUCK_TAPE_MAX_TRANSCRIPT_BYTES``; default 5 MiB on hook paths, raised by batch/explicit recovery).
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.errors import InputError

HOOK_MAX_BYTES = 5 * 1024 * 1024  # 5 MiB, DESIGN.md default for hook paths
RECOVER_MAX_BYTES = 256 * 1024 * 1024  # explicit recovery: 256 MiB unless raised by flag/env


def max_bytes_from_env(default: int) -> int:
    """``DUCK_TAPE_MAX_TRANSCRIPT_BYTES`` as an int (bytes), else ``default``.

    Raises InputError when the variable is set but not a positive integer.
    """
    raw = os.environ.get("DUCK_TAPE_MAX_TRANSCRIPT_BYTES")
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"DUCK_TAPE_MAX_TRANSCRIPT_BYTES must be a positive integer (bytes), got {raw!r}") from None
    if value <= 0:
        raise InputError(f"DUCK_TAPE_MAX_TRANSCRIPT_BYTES must be a positive integer (bytes), got {raw!r}")
    return value


def check_transcript_path(path: str | os.PathLike, *, max_bytes: int, trusted_root: str | None = None) -> Path:
    """Return the resolved path of a transcript that is safe to read.

    Raises InputError (exit 2) naming the file when it does not exist, is a symlink (or lies under one
    inside the trusted root), is not a regular file, lies outside ``trusted_root`` (default: env
    ``DUCK_TAPE_TRUSTED_ROOT``, unset = no restriction), or is larger than ``max_bytes`` bytes.
    """
    p = Path(path)
    if p.is_symlink():
        raise InputError("refusing to read a symlink; pass the real file", path=str(p))
    if not p.exists():
        raise InputError("no such file", path=str(p))
    if not p.is_file():
        raise InputError("not a regular file (expected a transcript .jsonl/.json)", path=str(p))
    resolved = p.resolve()
    root = trusted_root if trusted_root is not None else os.environ.get("DUCK_TAPE_TRUSTED_ROOT") or None
    if root:
        root_resolved = Path(root).resolve()
        if root_resolved != resolved and root_resolved not in resolved.parents:
            raise InputError(f"outside the trusted root {root_resolved} (DUCK_TAPE_TRUSTED_ROOT)", path=str(p))
        if resolved != p.absolute():
            raise InputError("path goes through a symlink; refusing", path=str(p))
    size = resolved.stat().st_size
    if size > max_bytes:
        raise InputError(
            f"transcript is {size} bytes, over the cap of {max_bytes} bytes "
            "(raise it with --max-bytes or DUCK_TAPE_MAX_TRANSCRIPT_BYTES)",
            path=str(p),
        )
    return resolved
