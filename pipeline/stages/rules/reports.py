"""The agent's end-of-turn reports: the densest source of a session (issue 21 §2: "the agent's end-of-task report
(what was done, what remains, caveats)").

A *turn* runs from one real user prompt to the next; its *report* is what the agent says after its last call that
changes something (edits, commands that are not reads or checks): main-thread messages of at least ``MIN_REPORT``
characters.  Two proposals come from it (``candidates.Candidate``):

* **caveats** — a statement of the report that names something distinctive (a path, an identifier, a number:
  ``factprune.distinctive``) and limits or negates ("16 failures are in new test files", "`.env.local` is not
  present yet", "the STT model is not wired in", "não há testes para X", "还没有测试", "아직 커밋하지 않았습니다"):
  the negation and limitation words of several languages are a closed class of grammar words, not a list of
  phrasings.  Kind ``fact``, prior ``CAVEAT`` (the session's last report: ``LAST`` more).  A line that announces
  the next step or asks the user is Position's, not a fact.
* **claims a run disproves** — the report claims success ("all tests pass", "✅ tested", "通过") while the last
  test/lint/build run of the turn failed (``tools.check_runs``): "Reported as passing, but the last `<run>` run
  failed: <its failure line>", kind ``fact``, prior ``DISPROVED``, quoting the run's failure line.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import tools
from pipeline.stages.rules.candidates import Candidate
from pipeline.stages.rules.factprune import distinctive
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.struggle import _CLAIM, HEDGE, NARRATION
from pipeline.stages.rules.text import clip, local_spans, span_index_at, strip_markup

CAVEAT = 1.5
LAST = 0.4
DISPROVED = 3.0
LIMIT = 300
MAX_CAVEAT_CUES = 60  # negation words of one message whose sentences are read (a long report: its first ones)
MIN_REPORT = 60  # characters: a shorter last message is a reply ("Done."), not a report

#: negation and limitation, a closed class of grammar words in each language the rules read
_LIMITS_SOURCE = (
    r"\b(?:not|no|never|none|nothing|cannot|can't|couldn't|won't|isn't|aren't|wasn't|weren't|doesn't|"
    r"don't|didn't|hasn't|haven't|hadn't|still|yet|missing|skipped|unable|"
    r"fail(?:s|ed|ing|ures?)?|broken|pending|untested|unverified|already|uncommitted|unrelated|unchanged|untouched)\b|"
    r"n't\b|⚠|❌|"
    r"\b(?:não|nao|nunca|ainda|todavía|aún|pas|jamais|nicht|kein\w*|noch)\b|"
    r"没有|还没|尚未|仍未|并未|未能|无法|不能|不会|不支持|不存在|仍然|안\s|않|못|없|아직|ない|ません|まだ|ず[、。]"
)
#: matched against lower-cased text (``re.IGNORECASE`` costs four times as much on a long report)
LIMITS = lazy_re(_LIMITS_SOURCE)
_LIMITS_ANYCASE = lazy_re(_LIMITS_SOURCE, re.IGNORECASE)
_ASKS = lazy_re(r"[?？]\s*$")
_PASS_CLAIM = lazy_re(
    r"\b(?:all\s+(?:\d+\s+)?tests?\s+pass\w*|tests?\s+(?:are\s+|were\s+)?pass\w*|pass(?:es|ed|ing)\b|(?:been\s+)?tested|"
    r"green|succeed\w*|successful(?:ly)?|works?\s+(?:now|correctly|fine))\b|✅|通过|成功|통과|성공|合格|passou|funciona",
    re.IGNORECASE,
)


def turns(s: Scan) -> list[tuple[int, int]]:
    """``(start, end)`` event ranges of the turns: each real user prompt up to the next (the first turn starts at 0)."""
    from pipeline.stages.rules.workflow import is_real_prompt

    starts = [i for i in s.users if is_real_prompt(s.events[i].text)]
    bounds = [0] + [i for i in starts if i > 0] + [len(s.events)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def _report(s: Scan, start: int, end: int) -> int | None:
    """The turn's last main-thread assistant message with text, or None."""
    from bisect import bisect_left

    k = bisect_left(s.assistants, end) - 1
    if k >= 0 and s.assistants[k] >= start and s.events[s.assistants[k]].text.strip():
        return s.assistants[k]
    return None


def _caveats(s: Scan, i: int, last: bool) -> list[Candidate]:
    """Caveat sentences of message ``i``: only the sentences around a negation or limitation word are split out
    (one pass of ``LIMITS`` over the text, ``text.local_spans``), so a long report costs little."""
    text = s.events[i].text
    low = text.lower()
    found = LIMITS.finditer(low) if len(low) == len(text) else _LIMITS_ANYCASE.finditer(text)
    positions = [m.start() for _, m in zip(range(MAX_CAVEAT_CUES), found)]
    if not positions:
        return []
    spans = local_spans(text, positions)
    picked = sorted({k for k in (span_index_at(spans, p) for p in positions) if k >= 0})
    out = []
    for a, b in (spans[k] for k in picked):
        sentence = strip_markup(text[a:b])
        if len(sentence) < 16 or _ASKS.search(sentence) or sentence.endswith((":", "：")) or NARRATION.match(sentence):
            continue
        if sentence.startswith(("|", "✅", "✔", "☑", "✓")) or _code_line(sentence) or _heading(text, a) or _OWN_ACTION.match(sentence):
            continue  # a table row, a check-mark status line, a heading, what the agent did (Done's)
        if _CLAIM.search(sentence) or HEDGE.search(sentence) or _NOTHING_LEFT.search(sentence):
            continue  # a claim that all went well, a guess, or "nothing pending": no caveat
        if _TODO_ITEM.match(sentence) or _PROPOSAL_LABEL.match(sentence):
            continue  # a work item ("Fix the 4 failing tests") or a recommendation: Remaining's and the Decision Log's
        if not LIMITS.search(sentence.lower()) or not distinctive(sentence):
            continue
        out.append(Candidate("fact", clip(sentence, LIMIT), i, a, b, "caveat", CAVEAT + (LAST if last else 0.0)))
    return out


#: the agent reporting its own action ("Created 3 commits…", "No secret files were committed.", "已经删除了…")
_OWN_ACTION = lazy_re(
    r"^(?:(?:I|we)\s+(?:have\s+|'ve\s+)?)?(?:created|added|updated|fixed|implemented|removed|deleted|committed|pushed|"
    r"moved|renamed|changed|modified|installed|generated|replaced|configured|marked|cleaned|applied|adjusted|restored|"
    r"reverted|merged|deployed|saved|wrote)\b|^no\s+[\w-]+(?:\s+[\w-]+)?\s+(?:were|was)\s+(?:committed|pushed|changed|added)|"
    r"^.{0,40}(?:已经|已)(?:删除|添加|修改|更新|创建|移除|完成)",
    re.IGNORECASE,
)


#: a report line saying nothing is left ("Follow-up: none pending.", "No outstanding issues.")
_NOTHING_LEFT = lazy_re(
    r"\b(?:none\s+(?:pending|left|remaining|outstanding)|no\s+(?:outstanding|remaining|pending|open)\s+\w+|"
    r"nothing\s+(?:else\s+)?(?:left|pending|remaining|to\s+do))\b|:\s*none\b",
    re.IGNORECASE,
)


#: a line that asks for work: an imperative change verb opening it
_TODO_ITEM = lazy_re(
    r"^(?:fix|add|update|create|implement|remove|write|run|test|check|verify|review|refactor|document|investigate|"
    r"merge|deploy|push|commit|rename|move|migrate|configure|set\s+up|clean\s+up|consider|re-?run)\b",
    re.IGNORECASE,
)
#: a recommendation or option label ("Recommended: Option A - …", "Suggestion: …")
_PROPOSAL_LABEL = lazy_re(r"^(?:recommend(?:ed|ation)|suggest(?:ed|ion)|proposal|proposed|option\s+\w)\b\W", re.IGNORECASE)


def _code_line(sentence: str) -> bool:
    """Whether the sentence is one code span (a line of code or a spec quoted in backticks)."""
    return sentence.startswith("`") and sentence.rstrip(".").endswith("`") and sentence.count("`") == 2


def _heading(text: str, at: int) -> bool:
    """Whether the line holding offset ``at`` is a markdown heading."""
    start = text.rfind("\n", 0, at) + 1
    return text[start:at].lstrip().startswith("#")


def _span_of(text: str, line: str) -> tuple[int, int] | None:
    """Where ``line`` (whitespace-normalized) stands in ``text``."""
    words = line.split()
    if not words:
        return None
    m = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return (m.start(), m.end()) if m else None


def _disproved(s: Scan, start: int, end: int, reports: list[int]) -> list[Candidate]:
    """A failed last run of a check, in a turn whose report claims success."""
    if not any(_PASS_CLAIM.search(s.events[i].text) for i in reports):
        return []
    from bisect import bisect_left

    from pipeline.stages.rules.episodes import check_runs

    last: dict[tuple[str, str], tuple[int, int | None, str, str]] = {}
    for call in s.calls[bisect_left(s.calls, start):bisect_left(s.calls, end)]:
        r = s.result_of.get(call)
        for kind, key, shown, outcome in check_runs(s, call):  # once per scan; a stopped run is no failed run
            if outcome != "unknown":
                last[(kind, key)] = (call, r, shown, outcome)
    out = []
    for call, r, shown, outcome in last.values():
        if outcome != "failed" or r is None:
            continue
        line = tools.failure_reason(s.events[r])
        where = _span_of(s.events[r].text, line) if line else None
        if where is None:
            continue
        text = f"Reported as passing, but the last `{clip(shown, 60)}` run failed: {line}"
        out.append(Candidate("fact", clip(text, LIMIT), r, where[0], where[1], "disproved", DISPROVED))
    return out


def _reporting(s: Scan, start: int, end: int, *, changed: bool = False) -> list[int]:
    """The turn's reporting messages: main-thread assistant messages after its last call that changes something
    (an edit, a command that is not a read or a check), at least ``MIN_REPORT`` characters long.  With
    ``changed``, none when the turn changed nothing (its messages answer; they report no work)."""
    from bisect import bisect_left

    from pipeline.stages.rules.struggle import looks

    from pipeline.stages.rules.episodes import check_runs

    changes = s.memo.get("reports.changes")
    if changes is None:  # the calls that change something, once per scan (reports and choices both ask)
        changes = s.memo["reports.changes"] = [c for c in s.calls if not looks(s, c) and not check_runs(s, c)]
    k = bisect_left(changes, end) - 1
    last_change = changes[k] if k >= 0 and changes[k] >= start else start
    if changed and last_change == start:
        return []
    a, b = bisect_left(s.assistants, last_change), bisect_left(s.assistants, end)
    return [i for i in s.assistants[a:b] if _width(s.events[i].text) >= MIN_REPORT]


_WIDE = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _width(text: str) -> int:
    """Characters of ``text``, a CJK character counted twice (it says about as much as two Latin letters)."""
    return len(text) + len(_WIDE.findall(text))


def propose(s: Scan) -> list[Candidate]:
    """Caveats and disproved claims of every turn's reporting messages (module rules), in transcript order."""
    out: list[Candidate] = []
    spans = turns(s)
    for n, (start, end) in enumerate(spans):
        reports = _reporting(s, start, end)
        if not reports:
            continue
        out.extend(_disproved(s, start, end, reports))
        for i in reports:
            out.extend(_caveats(s, i, n == len(spans) - 1))
    return out
