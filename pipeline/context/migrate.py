"""``duck-tape migrate``: classify freeform CONTEXT.md content into the schema (DESIGN.md "CONTEXT.md (Tier 1)").

The freeform part is everything above the schema (``ContextDoc.above``) except the title: a hand-written
CONTEXT.md, a CLAUDE.md or AGENTS.md.  It is cut into blocks: paragraphs, list items (with their indented lines),
headings and fenced code blocks.  Each paragraph or list item is scored against every section by English cue
phrases (``CUES``), by the headings it sits under (``HEADING_CUES``, weight 3), and by the same structural rules
that translate a state file, in any language (``pipeline.context.classify``): a standing rule (a file like this is
standing instructions, so a plain imperative is one too) scores for Conventions, a definition for Glossary, an
explicit goal for Goals, a question for Open-Questions, a choice stated in another language for Decisions, a
deferral for Deferred-Debt, a durable fact for Notes; a procedural step ("commit these changes") never scores
for Decisions and a command never for Glossary.  The block goes to the best-scoring section:

* Goals, Decisions, Conventions, Glossary: ``- **<key>**: <text>`` (a ``**key**:`` or ``term:`` prefix keeps its
  key, otherwise a slug; a key already taken by a different text gets ``-2``…; Decisions get the first date in
  the text, else today);
* Deferred-Debt: ``- TODO(<type>[,#<issue>]): <date> <what> [status: open]`` (an existing ``TODO(...)`` form and
  status marker are kept; otherwise the type is the cue word: todo, fixme, hack, or debt);
* Open-Questions: ``- <text> (date: <date>)``; Notes: a ``### <date> <HH:MM>`` block holding the lines verbatim.

A placement is flagged low confidence when its best score is below 2 or another section scores as high.  Blocks
with no cue, fenced code and headings that still have content stay above the schema, byte for byte; a heading
whose every block moved is removed.  Missing schema sections are added (with their scaffold line), a missing
title and ``## Contents`` too; the TOC is regenerated when the set of ``##`` headings changed.  The report names
every block's destination.  Merge rules apply to what moves (``pipeline.context.merge``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from pipeline.context import classify as rules
from pipeline.context import lexicon as lx
from pipeline.context.bootstrap import DEFAULT_TITLE, add_sections, ensure_toc, fill_scaffold
from pipeline.context.changelog import NO_CHANGES, changelog_lines
from pipeline.context.delta import ContextDelta, DeltaDebt, DeltaEntry, DeltaNote, DeltaQuestion
from pipeline.context.keys import assign_keys, split_term
from pipeline.context.merge import apply
from pipeline.context.model import KEYED, SCHEMA, ContextDoc
from pipeline.context.parse import fenced, items, key_of, norm, parse, strip_end
from pipeline.context.render import render

_I = re.IGNORECASE
CUES: dict[str, list[tuple[re.Pattern[str], int]]] = {
    "Goals": [(re.compile(r"\b(?:goals?|objectives?|mission|vision)\b", _I), 2),
              (re.compile(r"\b(?:we want|aims? to|so that|success (?:is|means|criteria))\b", _I), 1)],
    "Decisions": [(re.compile(r"\b(?:decided|decisions?|we chose|chosen|going with|settled on|switched to|adopted)\b", _I), 2),
                  (re.compile(r"\b(?:we use|we're using|we are using|instead of|approved|rejected)\b", _I), 1)],
    "Conventions": [(re.compile(r"\b(?:always|never)\b", _I), 2),
                    (re.compile(r"\b(?:must|should|don'?t|do not|conventions?|naming|prefer|style)\b", _I), 1)],
    "Glossary": [(re.compile(r"\b(?:means|stands for|refers to|is short for|aka|a\.k\.a\.|defined as)\b", _I), 2)],
    "Deferred-Debt": [(re.compile(r"\b(?:TODO|FIXME|HACK|XXX)\b"), 3),
                      (re.compile(r"\b(?:tech(?:nical)? debt|debt|workaround|temporary|for now|clean ?up|known issue|deferred)\b", _I), 1)],
    "Open-Questions": [(re.compile(r"\?\s*$"), 2),
                       (re.compile(r"\b(?:open question|unclear|not sure|tbd|to be decided|undecided|need to figure out)\b", _I), 1)],
    "Notes": [(re.compile(r"^(?:[-*+]\s+)?\**\d{4}-\d{2}-\d{2}"), 2),
              (re.compile(r"\b(?:session|today|yesterday|this morning|note to self)\b", _I), 1)],
}
HEADING_CUES: dict[str, re.Pattern[str]] = {
    "Goals": re.compile(r"\b(?:goals?|objectives?|aims?|mission|vision|purpose)\b", _I),
    "Decisions": re.compile(r"\b(?:decisions?|decided|adrs?|choices)\b", _I),
    "Conventions": re.compile(r"\b(?:conventions?|style|guidelines?|rules|standards|practices)\b", _I),
    "Glossary": re.compile(r"\b(?:glossary|terms|terminology|definitions|vocabulary|acronyms)\b", _I),
    "Deferred-Debt": re.compile(r"\b(?:debt|todos?|fixmes?|known issues?|backlog|deferred|workarounds?)\b", _I),
    "Open-Questions": re.compile(r"\b(?:questions?|unknowns|unresolved|open issues)\b", _I),
    "Notes": re.compile(r"\b(?:notes|log|journal|history|sessions?)\b", _I),
}
TERM_WEIGHT = 2
"""A ``**key**: text`` item scores 2 for Glossary; a bare ``term: text`` only 1 (``Owner: …`` is a weak cue)."""
HEADING_WEIGHT = 3
TIE_ORDER = ("Deferred-Debt", "Open-Questions", "Decisions", "Conventions", "Goals", "Glossary", "Notes")

_HEADING = re.compile(r"(?P<hashes>#{1,6})[ \t]+(?P<name>.*?)[ \t#]*")
_BULLET = re.compile(r"[-*+][ \t]+")
_BOLD_KEY = re.compile(r"\*\*(?P<key>[^*]+?):?\*\*:?[ \t]*(?P<text>.*)")
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}))?")
_DEBT = re.compile(r"TODO\((?P<type>[^),#]+?)(?:,\s*#(?P<issue>[^)\s]+))?\):\s*(?:(?P<date>\d{4}-\d{2}-\d{2})\s+)?(?P<what>.*)")
_CUE_WORD = re.compile(r"\b(TODO|FIXME|HACK|XXX)\b:?\s*")
_STATUS_TAIL = re.compile(r"\s*\[status:\s*(?P<status>open|resolved)\]\s*$")
_COMMAND_LEAD = re.compile(r"`[^`]+`\s*(?:[-—–:]|\s-\s)")
"""A list item that documents a command: ```make dev` — starts the containers``."""


@dataclass(slots=True)
class Block:
    """Lines ``above[start:end]`` of one kind (heading, para, item, code); ``headings``: the headings above it."""

    kind: str
    start: int
    end: int
    text: str
    headings: list[str] = field(default_factory=list)
    level: int = 0


@dataclass(slots=True)
class MigrateOutcome:
    """``before``/``after`` texts, ``changed``, ``report`` (one line per block and per added header) and
    ``changelog`` (as a merge's: ``- Added: <Section> <key>``… or ``No changes to CONTEXT.md.``).  Added
    (defaults): ``placements``, the report's block lines as records ``{"lines": [first, last] (1-based),
    "excerpt", "to": <section> | "kept" | "removed", "low_confidence": <why> | None}`` in file order;
    ``added_sections`` (schema names) and ``toc_regenerated``."""

    before: str
    after: str
    changed: bool
    report: list[str]
    changelog: list[str]
    placements: list[dict] = field(default_factory=list)
    added_sections: list[str] = field(default_factory=list)
    toc_regenerated: bool = False


def segment(lines: list[str]) -> list[Block]:
    """Cut the freeform lines into blocks (module docstring); the leading ``# `` title line is not a block."""
    flags = fenced(lines)
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    i, n = 0, len(lines)
    if _has_title(lines):
        i = next(k for k, line in enumerate(lines) if strip_end(line).strip()) + 1
    while i < n:
        line = strip_end(lines[i])
        if not line.strip():
            i += 1
            continue
        if flags[i]:
            end = i + 1
            while end < n and flags[end]:
                end += 1
            blocks.append(Block("code", i, end, line, [h for _, h in stack]))
            i = end
            continue
        heading = _HEADING.fullmatch(line)
        if heading:
            level = len(heading["hashes"])
            stack = [(lv, h) for lv, h in stack if lv < level]
            blocks.append(Block("heading", i, i + 1, line.strip(), [h for _, h in stack], level))
            stack.append((level, heading["name"]))
            i += 1
            continue
        bullet = _BULLET.match(line)
        end = i + 1
        if bullet:
            while end < n and strip_end(lines[end]).strip() and lines[end][:1] in (" ", "\t") and not flags[end]:
                end += 1
        else:
            while (end < n and strip_end(lines[end]).strip() and not flags[end] and not _BULLET.match(lines[end])
                   and not _HEADING.fullmatch(strip_end(lines[end]))):
                end += 1
        text = norm(" ".join(strip_end(lines[k]) for k in range(i, end)))
        kind = "item" if bullet else "para"
        blocks.append(Block(kind, i, end, _BULLET.sub("", text, count=1) if bullet else text, [h for _, h in stack]))
        i = end
    return blocks


RULE_WEIGHT = 2
"""A structural verdict (``pipeline.context.classify``) counts as a strong cue; a durable fact or a deferral as a weak one."""


def score(block: Block) -> dict[str, int]:
    """Cue score of ``block`` per section (module docstring)."""
    text = block.text
    scores = dict.fromkeys(SCHEMA, 0)
    for section, cues in CUES.items():
        scores[section] += sum(weight for pattern, weight in cues if pattern.search(text))
    if _BOLD_KEY.match(text):
        scores["Glossary"] += TERM_WEIGHT
    elif rules.definition(text) is not None:
        scores["Glossary"] += 1
    if not text.startswith(">"):  # a quotation is kept in its writer's words unless an English cue places it
        _structural(text, scores)
    for heading in block.headings:
        for section, pattern in HEADING_CUES.items():
            if pattern.search(heading):
                scores[section] += HEADING_WEIGHT
    if rules.command_shaped(text) or _COMMAND_LEAD.match(text):
        scores["Glossary"] = 0
    if rules.decision("APPROVED", text).reason in (rules.PROCEDURAL, rules.COMMAND, rules.TEMPORARY):
        scores["Decisions"] = 0
    return scores


def _structural(text: str, scores: dict[str, int]) -> None:
    """Add the scores of the structural rules (any language) to ``scores``, where the English cues did not fire."""
    if rules.rule(text, standing=True) is not None and not scores["Conventions"]:
        scores["Conventions"] += RULE_WEIGHT
    if rules.goals(text) and not scores["Goals"]:
        scores["Goals"] += RULE_WEIGHT
    if lx.QUESTION.search(text) and not lx.OFFER.search(text) and not scores["Open-Questions"]:
        scores["Open-Questions"] += RULE_WEIGHT
    if lx.DECIDED.search(text) and not scores["Decisions"]:
        scores["Decisions"] += RULE_WEIGHT
    if lx.DEFERRED.search(text) and not scores["Deferred-Debt"]:
        scores["Deferred-Debt"] += 1
    if rules.fact(text).target == "Notes" and not scores["Notes"]:
        scores["Notes"] += 1


def classify(block: Block) -> tuple[str | None, str | None]:
    """``(section, low_confidence_reason)``; ``(None, None)`` when no cue matched."""
    scores = score(block)
    ranked = sorted(SCHEMA, key=lambda s: (-scores[s], TIE_ORDER.index(s)))
    best, second = ranked[0], ranked[1]
    if scores[best] == 0:
        return None, None
    if scores[second] == scores[best]:
        return best, f"also matches {second}"
    if scores[best] < 2:
        return best, "weak cue"
    return best, None


def _excerpt(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _where(block: Block) -> str:
    return f"line {block.start + 1}" if block.end - block.start == 1 else f"lines {block.start + 1}-{block.end}"


def plan_migrate(text: str, *, path: str, now: datetime) -> MigrateOutcome:
    """Plan the migration of CONTEXT.md ``text`` (module docstring); nothing is written.

    ``now``: UTC time for undated Decisions, questions, debts and Notes blocks.  Raises ``InputError`` for a
    duplicated schema section.  The caller runs the redaction gate on ``after``.
    """
    doc = parse(text, path=path)
    day = now.strftime("%Y-%m-%d")
    blocks = segment(doc.above)
    placed: list[tuple[Block, str]] = []
    rows: list[tuple[int, str]] = []
    records: list[tuple[int, dict]] = []
    for block in blocks:
        if block.kind not in ("para", "item"):
            continue
        section, low = classify(block)
        excerpt = _excerpt(block.text)
        records.append((block.start, _record(block, excerpt, section or "kept", low)))
        if section is None:
            rows.append((block.start, f'- {_where(block)} "{excerpt}" -> kept above the schema (no cue matched)'))
            continue
        placed.append((block, section))
        flag = f" (low confidence: {low})" if low else ""
        rows.append((block.start, f'- {_where(block)} "{excerpt}" -> {section}{flag}'))
    moved = {(b.start, b.end) for b, _ in placed}
    delta = _delta(doc, placed, day, now)
    old_names = doc.names()
    removed_headings = _removable_headings(blocks, moved)
    for block in removed_headings:
        rows.append((block.start, f'- {_where(block)} "{block.text}" -> removed (every block under it moved)'))
        records.append((block.start, _record(block, block.text, "removed", None)))
    report = [text for _, text in sorted(rows, key=lambda row: row[0])]
    doc.above = _rebuild_above(doc.above, moved | {(b.start, b.end) for b in removed_headings})
    if not _has_title(doc.above):
        doc.above[:0] = [DEFAULT_TITLE + doc.newline, doc.newline]
    missing = doc.missing()
    add_sections(doc, missing)
    changes = apply(doc, [delta], today=day) + fill_scaffold(doc, day, names=missing)
    if missing:
        report.append("- added sections: " + ", ".join(f"## {name}" for name in missing))
    toc = ensure_toc(doc, old_names)
    if toc:
        report.append("- ## Contents regenerated")
    after = render(doc)
    changed = after != text
    return MigrateOutcome(text, after, changed, report or ["- nothing above the schema to classify"],
                          changelog_lines(changes) if changed else [NO_CHANGES],
                          [record for _, record in sorted(records, key=lambda row: row[0])], list(missing), bool(toc))


def _record(block: Block, excerpt: str, to: str, low: str | None) -> dict:
    return {"lines": [block.start + 1, max(block.end, block.start + 1)], "excerpt": excerpt, "to": to,
            "low_confidence": low}


def _has_title(lines: list[str]) -> bool:
    first = next((strip_end(line) for line in lines if strip_end(line).strip()), "")
    return first.lstrip("\ufeff").startswith("# ")


def _removable_headings(blocks: list[Block], moved: set[tuple[int, int]]) -> list[Block]:
    """Headings that had content and whose every content block moved (nested headings included)."""
    removed: list[Block] = []
    gone = set(moved)
    for k in range(len(blocks) - 1, -1, -1):
        heading = blocks[k]
        if heading.kind != "heading":
            continue
        inside = []
        for block in blocks[k + 1 :]:
            if block.kind == "heading" and block.level <= heading.level:
                break
            inside.append(block)
        if inside and all((b.start, b.end) in gone for b in inside):
            removed.append(heading)
            gone.add((heading.start, heading.end))
    return sorted(removed, key=lambda b: b.start)


def _rebuild_above(lines: list[str], dropped: set[tuple[int, int]]) -> list[str]:
    """``lines`` without the ``dropped`` ranges; blank lines left doubled by a removal are collapsed, and the
    part ends with one blank line (before the schema) when anything is left."""
    skip = set()
    for start, end in dropped:
        skip.update(range(start, end))
    kept: list[str] = []
    removed_since = False
    for i, line in enumerate(lines):
        if i in skip:
            removed_since = True
            continue
        blank = not strip_end(line).strip()
        if blank and removed_since and (not kept or not strip_end(kept[-1]).strip()):
            continue
        kept.append(line)
        if not blank:
            removed_since = False
    if not skip:
        return kept
    while len(kept) >= 2 and not strip_end(kept[-1]).strip() and not strip_end(kept[-2]).strip():
        kept.pop()
    return kept


def _delta(doc: ContextDoc, placed: list[tuple[Block, str]], day: str, now: datetime) -> ContextDelta:
    delta = ContextDelta()
    keyed: dict[str, list[tuple[Block, str | None, str]]] = {}
    for block, section in placed:
        found = _DATE.search(block.text)
        when = found.group(1) if found else day
        if section in KEYED:
            bold = _BOLD_KEY.fullmatch(block.text)
            defined = rules.definition(block.text) if section == "Glossary" and not bold else None
            term, rest = (bold["key"].strip(), bold["text"]) if bold else defined or split_term(block.text)
            keyed.setdefault(section, []).append((block, term, rest if term else block.text))
        elif section == "Deferred-Debt":
            delta.debts.append(_debt(block.text, when))
        elif section == "Open-Questions":
            delta.questions.append(DeltaQuestion(text=block.text, date=when))
        else:
            clock = found.group(2) if found and found.group(2) else ("00:00" if found else now.strftime("%H:%M"))
            lines = [strip_end(line) for line in doc.above[block.start : block.end]]
            delta.notes.append(DeltaNote(stamp=f"{when} {clock}", lines=lines))
    for section, rows in keyed.items():
        slugs = iter(assign_keys([text for _, term, text in rows if term is None]))
        taken = _taken(doc, section)
        for block, term, text in rows:
            key = term if term is not None else next(slugs)
            key = _free_key(key, text, taken)
            taken[key_of(key)] = norm(text)
            found = _DATE.search(block.text)
            date_ = (found.group(1) if found else day) if section == "Decisions" else None
            delta.entries.append(DeltaEntry(section=section, key=key, text=text, date=date_))  # type: ignore[arg-type]
    return delta


def _taken(doc: ContextDoc, section: str) -> dict[str, str]:
    target = doc.get(section)
    if target is None:
        return {}
    return {it.key: norm(it.value or "") for it in items(target) if it.kind == "entry" and it.key}


def _free_key(key: str, text: str, taken: dict[str, str]) -> str:
    """``key``, or ``key-2``, ``key-3``… when ``key`` already holds a different text (migration never supersedes)."""
    candidate, n = key, 2
    while key_of(candidate) in taken and taken[key_of(candidate)] != norm(text):
        candidate, n = f"{key}-{n}", n + 1
    return candidate


def _debt(text: str, when: str) -> DeltaDebt:
    marker = _STATUS_TAIL.search(text)
    status = marker["status"] if marker else "open"
    text = _STATUS_TAIL.sub("", text)
    match = _DEBT.match(text)
    if match:
        return DeltaDebt(type=match["type"].strip(), issue=match["issue"], date=match["date"] or when,
                         what=match["what"], status=status)
    cue = _CUE_WORD.search(text)
    kind = cue.group(1).lower() if cue else "debt"
    what = _CUE_WORD.sub("", text, count=1).strip() if cue and cue.start() == 0 else text
    return DeltaDebt(type=kind, date=when, what=what or text, status=status)
