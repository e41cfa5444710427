"""Issue 26 bars: the development sessions recovered and merged one after another into one CONTEXT.md.

``python -m evals.context_corpus [--out CONTEXT.md] [--sample 30] [--states DIR]``

Recovers every session that ``../shared/corpus/probes.json`` and ``../shared/corpus2/probes.json`` name (29; the
rules engine as it is now, the whole file read, the state's time = the session's last event), orders them by that
time, and merges each state file into one CONTEXT.md, one merge per state as a team would over months.  Then it
checks the bars and prints them:

* no Decisions entry is a procedural approval or a task list: no ``workflow-`` key, no ``Task <time>:`` lines, no
  ``the plan:``, and no entry headed by a session verb (commit, push, merge, run, retry, continue, proceed, go
  ahead, deploy, install, delete, kill, "fix that/this/it") without a lasting word (instead of, every, always,
  never, by default, from now on) — checked with its own word list, not with the classifier under test;
* no Glossary entry is a command: no backticks in the term, no shell command as the term, no "failed"/"worked"
  trial in the definition;
* every Deferred-Debt item has a status marker;
* merging all the states again changes nothing; merging the last state again changes nothing.

``--sample N`` prints N entries spread evenly over the file (every k-th entry of Decisions, Conventions, Glossary,
Deferred-Debt, Open-Questions and the Notes bullets) for a person to read; ``--states DIR`` also writes the
recovered state files there.  Exit 0 when every bar holds, 1 otherwise, 2 when the corpus is not there.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import date, datetime, timezone
from pathlib import Path

from pipeline.context.api import plan
from pipeline.context.changelog import NO_CHANGES
from pipeline.context.parse import items, parse
from pipeline.recovery import recover
from pipeline.state.parse import parse as parse_state
from pipeline.transcripts import read_transcript

ROOT = Path(__file__).resolve().parent.parent
CORPORA = (ROOT.parent / "shared" / "corpus", ROOT.parent / "shared" / "corpus2")
WHOLE = 1 << 30  # read whole sessions (the largest is ~3 MB)
TODAY = date(2026, 12, 4)

_PROCEDURAL_HEAD = re.compile(
    r"^(?:(?:ok|yes|please|let'?s)[,\s]+)*(?:commit\w*|push\w*|merg\w+|run|runs|running|rerun\w*|retry\w*|continu\w+|"
    r"proceed\w*|go\s+ahead|deploy\w*|install\w*|delet\w+|kill\w*|restart\w*|fix\w*\s+(?:that|this|it|these|those)\b)",
    re.IGNORECASE,
)
_LASTING = re.compile(r"\b(?:instead\s+of|rather\s+than|every|always|never|by\s+default|from\s+now\s+on|so\s+that)\b", re.I)
_TASK_LIST = re.compile(r"\bTask\s+\d{4}-\d{2}-\d{2}T|\bActive\s+task\b|^\s*(?:the\s+)?plan\s*:", re.IGNORECASE)
_SHELL = re.compile(r"^(?:git|npm|pnpm|yarn|npx|uv|pip|python3?|make|cmake|cargo|go|docker|kubectl|bash|sh|cd|rm|ls|cat)\b")
_TRIAL = re.compile(r"\b(?:failed|worked|was blocked)\b")
_ENTRY_TEXT = re.compile(r"^(?:APPROVED|REJECTED):\s*(?P<what>.*?)(?:\s+-\s+.*)?$")


def sessions() -> list[Path]:
    """The development sessions the two corpora's ``probes.json`` name, as paths."""
    found = []
    for corpus in CORPORA:
        probes = corpus / "probes.json"
        if probes.is_file():
            found += [corpus / name for name in json.loads(probes.read_text(encoding="utf-8"))]
    return found


def recover_all(paths: list[Path], states_dir: Path | None) -> list[tuple[str, str, object]]:
    """``(end time, file name, AgentState)`` per session, oldest first; each state parsed back from its text (what
    ``duck-tape merge`` reads)."""
    rows = []
    for path in paths:
        meta = read_transcript(str(path), max_bytes=WHOLE).meta
        end = meta.end_time or meta.start_time or "2026-01-01T00:00:00Z"
        now = datetime.fromisoformat(end.replace("Z", "+00:00")).astimezone(timezone.utc)
        text = recover(str(path), now=now, mask=True, max_bytes=WHOLE).text
        name = path.name + ".state.md"
        if states_dir is not None:
            states_dir.mkdir(parents=True, exist_ok=True)
            (states_dir / name).write_text(text, encoding="utf-8")
        rows.append((end, name, parse_state(text, path=name)))
    return sorted(rows, key=lambda row: (row[0], row[1]))


def merge_in_sequence(rows: list[tuple[str, str, object]]) -> tuple[str, list[list[str]]]:
    """The CONTEXT.md after merging each state in turn into the previous result, and each merge's changelog."""
    text: str | None = None
    logs = []
    for _, name, state in rows:
        outcome = plan(Path("CONTEXT.md"), text, [state], mask=True, today=TODAY, names=[name])
        text = outcome.after
        logs.append(outcome.changelog + outcome.skipped)
    return text or "", logs


def bars(text: str, rows: list[tuple[str, str, object]]) -> list[tuple[str, bool, str]]:
    """``(bar, held, detail)`` for each bar of the module docstring."""
    doc = parse(text)
    results = []
    bad = []
    for it in items(doc.get("Decisions")):
        if it.kind != "entry":
            continue
        what = (_ENTRY_TEXT.match(it.value or "") or {"what": it.value or ""})["what"]
        if (it.label or "").startswith("workflow-") or _TASK_LIST.search(it.value or "") or (
                _PROCEDURAL_HEAD.match(what) and not _LASTING.search(what)):
            bad.append(it.label)
    results.append(("no Decisions entry is a procedural approval or a task list", not bad, ", ".join(bad)))
    bad = []
    for it in items(doc.get("Glossary")):
        if it.kind == "entry" and ("`" in (it.label or "") or _SHELL.match(it.label or "")
                                   or _TRIAL.search(it.value or "")):
            bad.append(it.label)
    results.append(("no Glossary entry is a command", not bad, ", ".join(bad)))
    debts = [it for it in items(doc.get("Deferred-Debt")) if it.kind in ("debt", "scaffold")]
    bad = [it.label for it in debts if it.status is None]
    results.append(("every Deferred-Debt item has a status", not bad and bool(debts),
                    f"{len(debts)} items" + (f"; no status: {', '.join(bad)}" if bad else "")))
    states = [state for _, _, state in rows]
    names = [name for _, name, _ in rows]
    again = plan(Path("CONTEXT.md"), text, states, mask=True, today=TODAY, names=names)
    results.append(("merging all the states again changes nothing", again.changelog == [NO_CHANGES],
                    "; ".join(again.changelog[:3])))
    last = plan(Path("CONTEXT.md"), text, states[-1:], mask=True, today=TODAY, names=names[-1:])
    results.append(("merging the last state again changes nothing", last.changelog == [NO_CHANGES],
                    "; ".join(last.changelog[:3])))
    return results


def entries(text: str) -> list[tuple[str, str]]:
    """``(section, line)`` of every entry a reader would judge: keyed entries, debts, questions, Notes bullets."""
    doc = parse(text)
    out = []
    for name in ("Goals", "Decisions", "Conventions", "Glossary", "Deferred-Debt", "Open-Questions"):
        section = doc.get(name)
        for it in items(section):
            if it.kind in ("entry", "debt", "question"):
                out.append((name, "".join(section.body[it.start:it.end]).strip()))
    for line in doc.get("Notes").body:
        if line.startswith("- "):
            out.append(("Notes", line.strip()))
    return out


def sample(all_entries: list[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    """``n`` entries spread evenly over ``all_entries`` (every k-th, starting at the first)."""
    if n >= len(all_entries):
        return list(all_entries)
    step = len(all_entries) / n
    return [all_entries[int(i * step)] for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the merged CONTEXT.md here")
    parser.add_argument("--sample", type=int, default=30, help="entries to print for reading by hand")
    parser.add_argument("--states", type=Path, help="also write the recovered state files into this folder")
    args = parser.parse_args(argv)
    paths = sessions()
    if not paths:
        print(f"corpus not found under {', '.join(str(c) for c in CORPORA)}", file=sys.stderr)
        return 2
    rows = recover_all(paths, args.states)
    text, _ = merge_in_sequence(rows)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    every = entries(text)
    counts: dict[str, int] = {}
    for section, _ in every:
        counts[section] = counts.get(section, 0) + 1
    print(f"{len(rows)} sessions merged one after another; {len(every)} entries: "
          + ", ".join(f"{name} {n}" for name, n in counts.items()))
    held = True
    for bar, ok, detail in bars(text, rows):
        held &= ok
        print(f"{'PASS' if ok else 'FAIL'}  {bar}" + (f"  ({detail})" if detail else ""))
    if args.sample:
        print(f"\n{args.sample} entries to read by hand:")
        for n, (section, line) in enumerate(sample(every, args.sample), 1):
            print(f"{n:2}. [{section}] {line}")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
