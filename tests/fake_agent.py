"""A fake agent CLI (``claude``, ``codex``, ``gemini``, ``opencode``, ``copilot``) for the tests of issue 25.

``install(bin_dir, names)`` writes one executable per name into ``bin_dir`` (put it first on ``PATH``); each runs
``main(<name>)`` with this interpreter.  A run:

1. reads stdin, picks its reply (below) and appends one JSON line to ``$FAKE_AGENT_LOG``: ``{"cli", "argv", "stdin",
   "cwd", "nested" (DUCK_TAPE_NESTED), "pwd" (PWD), "schema" (the file ``--output-schema`` names, parsed),
   "answered" (False when it fails on purpose or has no answer)}``;
2. the reply: the next step of ``$FAKE_AGENT_SCRIPT`` (a JSON list; ``$FAKE_AGENT_SCRIPT.n`` counts the steps
   played), else the answer ``$FAKE_AGENT_BY_SCHEMA`` (a JSON object) holds under the title of the answer's schema
   (``ChunkFindings``, ``WovenSections``…; every call of that kind gets it), else the answer
   ``$FAKE_AGENT_RECORDING`` (a JSON object) holds under ``key(stdin)``.  A step is one of
   ``{"answer": {...}}`` (a good answer), ``{"text": "..."}`` (the model's text as it is), ``{"error": "..."}``
   (the CLI reports an error), ``{"exit": N, "stderr": "..."}`` (the CLI fails without output), ``{"sleep": S,
   ...}`` (wait S seconds first);
3. prints the reply in its CLI's own output format: the files of ``fixtures/agent_cli/outputs/`` with the answer,
   and token counts (whitespace words of stdin sent, of the answer received), put in.

Those output files were written from each CLI's documented output format (the module docstrings of
``pipeline.llm.agents.*`` cite where), the Copilot events from the shape of a real Copilot session log; they are
not captured from live runs.  So the tests built on this prove the request shape, the flags, the parsing and the
failure handling, not that a CLI of today prints exactly this, nor anything about a model's answers.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUTS = ROOT / "fixtures" / "agent_cli" / "outputs"
FILES = {"claude": "claude-code.json", "codex": "codex.jsonl", "gemini": "gemini.json", "opencode": "opencode.jsonl",
         "copilot": "copilot.jsonl"}
NAMES = tuple(FILES)
_FENCE = re.compile(r"<(transcript|findings|prompts|draft)>\n(.*?)\n</\1>", re.DOTALL)


def key(prompt: str) -> str:
    """The recording key of a prompt: SHA-256 of its fenced data blocks (``pipeline.llm.prompts.fence``), so a
    change of a template's wording keeps the key and a change of the data does not."""
    blocks = [f"{m.group(1)}:{m.group(2)}" for m in _FENCE.finditer(prompt)]
    return hashlib.sha256("\n".join(blocks).encode("utf-8")).hexdigest()


def install(bin_dir: Path, names: tuple[str, ...] = NAMES) -> Path:
    """Write the fake executables ``names`` into ``bin_dir`` (created); return ``bin_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parent
    for name in names:
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(here)!r})\n"
                        f"from fake_agent import main\nmain({name!r})\n", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir


def _schema(argv: list[str]) -> object:
    if "--output-schema" in argv:
        try:
            return json.loads(Path(argv[argv.index("--output-schema") + 1]).read_text(encoding="utf-8"))
        except (OSError, ValueError, IndexError):
            return None
    return None


def schema_title(argv: list[str], prompt: str) -> str | None:
    """The top-level ``title`` of the answer's schema: from ``--json-schema`` (claude), the ``--output-schema`` file
    (codex) or the schema line of the prompt (the others)."""
    schema = _schema(argv)
    if schema is None and "--json-schema" in argv:
        schema = json.loads(argv[argv.index("--json-schema") + 1])
    if schema is None and "JSON Schema:\n" in prompt:
        schema = json.loads(prompt.split("JSON Schema:\n", 1)[1].splitlines()[0])
    return schema.get("title") if isinstance(schema, dict) else None


def _by_schema(argv: list[str], prompt: str) -> dict | None:
    table = os.environ.get("FAKE_AGENT_BY_SCHEMA")
    if not table:
        return None
    answers = json.loads(Path(table).read_text(encoding="utf-8"))
    title = schema_title(argv, prompt)
    return {"answer": answers[title]} if title in answers else {"exit": 3, "stderr": f"fake agent: no answer for {title}"}


def _next_step() -> dict | None:
    script = os.environ.get("FAKE_AGENT_SCRIPT")
    if not script:
        return None
    steps = json.loads(Path(script).read_text(encoding="utf-8"))
    counter = Path(script + ".n")
    played = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(played + 1))
    if played >= len(steps):
        return {"exit": 3, "stderr": f"fake agent: no scripted step left (played {played})"}
    return steps[played]


def _recorded(prompt: str) -> dict:
    recording = os.environ.get("FAKE_AGENT_RECORDING")
    if not recording:
        return {"exit": 3, "stderr": "fake agent: neither FAKE_AGENT_SCRIPT nor FAKE_AGENT_RECORDING is set"}
    answers = json.loads(Path(recording).read_text(encoding="utf-8"))
    found = answers.get(key(prompt))
    if found is None:
        return {"exit": 3, "stderr": f"fake agent: no recorded answer for key {key(prompt)[:12]}: re-record with "
                                     "python tests/record_agent_cli.py (the rules engine's findings changed)"}
    return {"answer": found}


def _fill(template: str, *, text: str, obj: object, sent: int, received: int, error: str = "") -> str:
    return (template.replace("@@ANSWER_TEXT@@", json.dumps(text))
            .replace("@@ANSWER_OBJECT@@", json.dumps(obj))
            .replace("@@ERROR_TEXT@@", json.dumps(error))
            .replace("@@SENT@@", str(sent)).replace("@@RECEIVED@@", str(received))
            .replace("@@TOTAL@@", str(sent + received)))


def main(name: str) -> None:
    argv = sys.argv[1:]
    prompt = sys.stdin.read()
    step = _next_step() or _by_schema(argv, prompt) or _recorded(prompt)
    log = os.environ.get("FAKE_AGENT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"cli": name, "argv": argv, "stdin": prompt, "cwd": os.getcwd(),
                                     "nested": os.environ.get("DUCK_TAPE_NESTED"), "pwd": os.environ.get("PWD"),
                                     "schema": _schema(argv), "answered": "exit" not in step}) + "\n")
    if step.get("sleep"):
        time.sleep(float(step["sleep"]))
    if "exit" in step:
        sys.stderr.write(str(step.get("stderr", "")) + "\n")
        sys.exit(int(step["exit"]))
    sent = len(prompt.split()) + (len(" ".join(argv).split()) if name == "claude" else 0)
    if "error" in step:
        template = (OUTPUTS / FILES[name].replace(".json", ".error.json")).read_text(encoding="utf-8")
        sys.stdout.write(_fill(template, text="", obj=None, sent=0, received=0, error=step["error"]))
        sys.exit(int(step.get("code", 1)))
    if "answer" in step:
        text = json.dumps(step["answer"])
        obj = step["answer"] if name == "claude" else None
        shown = "" if name == "claude" else text
    else:
        text = shown = step["text"]
        obj = None
    template = (OUTPUTS / FILES[name]).read_text(encoding="utf-8")
    sys.stdout.write(_fill(template, text=shown, obj=obj, sent=sent, received=len(text.split())))
    sys.exit(0)
