"""Read stage: transcript file -> normalized ``Transcript`` (DESIGN.md "Transcript formats", FORMATS.md).

``read_transcript(path)`` checks the input, detects the format by content and dispatches to the reader
module of that harness.  Reader modules are imported lazily and each exposes
``read(path: str, fmt: str, report: ReadReport, caps: Caps, limit: int | None) -> Transcript``; ``limit`` is
the size the check saw, so a transcript that grows while it is read is read only that far.
"""

from __future__ import annotations

import importlib
import sys

from pipeline.errors import InputError
from pipeline.transcripts.common import DEFAULT_CAPS, Caps
from pipeline.transcripts.detect import detect_format
from pipeline.transcripts.model import ReadReport, Transcript
from pipeline.transcripts.safety import RECOVER_MAX_BYTES, checked_transcript

#: format -> reader module (each has ``read(path, fmt, report, caps)``)
READERS: dict[str, str] = {
    "claude-code-jsonl": "pipeline.transcripts.claude_code",
    "claude-code-json-array": "pipeline.transcripts.claude_code",
    "copilot-events": "pipeline.transcripts.copilot",
    "copilot-legacy": "pipeline.transcripts.copilot",
    "opencode-export": "pipeline.transcripts.opencode",
    "opencode-messages": "pipeline.transcripts.opencode",
    "codex-rollout": "pipeline.transcripts.codex",
    "gemini-chat-jsonl": "pipeline.transcripts.gemini",
    "gemini-chat-json": "pipeline.transcripts.gemini",
    "gemini-stream-json": "pipeline.transcripts.gemini",
    "generic-jsonl": "pipeline.transcripts.generic",
}

#: formats that are recognised but hold no session to recover from -> why they are refused
NOT_TRANSCRIPTS: dict[str, str] = {
    "gemini-prompt-log": (
        "not a session transcript (a Gemini CLI prompt log, logs.json: only the prompts typed, no replies or tool "
        "calls); pass the session file under ~/.gemini/tmp/<project>/chats/ instead"
    ),
}


def read_transcript(
    path: str,
    *,
    max_bytes: int = RECOVER_MAX_BYTES,
    trusted_root: str | None = None,
    caps: Caps = DEFAULT_CAPS,
    warn: bool = True,
) -> Transcript:
    """Read the transcript at ``path`` into a ``Transcript``.

    Raises InputError (exit 2) for a missing file, a symlink, a file that is not a regular file (a FIFO, a
    device), a file outside the trusted root, a file over ``max_bytes`` bytes, an unknown format (naming the formats it knows),
    or a recognised file that is not a session transcript (``NOT_TRANSCRIPTS``: a Gemini CLI prompt log).  Bad records are skipped and
    counted in ``transcript.report``; with ``warn`` one line naming the file and line numbers goes to stderr.
    """
    resolved, size = checked_transcript(path, max_bytes=max_bytes, trusted_root=trusted_root)
    fmt = detect_format(str(resolved), size)
    if fmt in NOT_TRANSCRIPTS:
        raise InputError(NOT_TRANSCRIPTS[fmt], path=str(path))
    module_name = READERS.get(fmt)
    if module_name is None:
        raise InputError(
            "unknown transcript format (expected Claude Code JSONL or JSON array, Copilot CLI events.jsonl, "
            "opencode export/messages JSON, Codex rollout JSONL, Gemini CLI chat JSONL/JSON or stream-json, "
            "or {role, content} JSONL)",
            path=str(path),
        )
    reader = importlib.import_module(module_name)
    report = ReadReport()
    transcript = reader.read(str(path), fmt, report, caps, size)
    if warn:
        message = report.warning(str(path))
        if message:
            print(message, file=sys.stderr)
    return transcript


__all__ = ["read_transcript", "detect_format", "READERS", "Transcript"]
