"""The Decision Log of the rules engine (DESIGN.md "Agent State file": Decision Log, append-only).

Sources, and only these:
* main-thread ``assistant_text``: explicit markers and implicit phrasings (``phrases``), origins ``explicit``,
  ``implicit`` and ``dead-end``; a message repeated verbatim (replayed history) is read once;
* ``user_prompt``: explicit markers, approvals/rejections of the assistant's proposal, instructions
  (``approvals``), origins ``user-approval``, ``user-rejection``, ``user``;
* a tool call the user declined (the harness's denial message as the result): REJECTED "<tool> <target>", in
  the words of the prompt that follows it, origin ``user-rejection``;
* ``compaction`` summaries, origin ``compaction-summary``: a summary is a model's paraphrase of the history
  before it, so it is used only when that history is not in the transcript (at most
  ``SUMMARY_HISTORY_LIMIT`` assistant messages before it, e.g. a session continued in a new file), and then
  only for decisions no other event carries (same or overlapping words, either status).
Never from ``reasoning``, ``tool_call``/``tool_result`` text, sub-agent events or sub-agent chatter.

Only the speaker's own words count (``untrusted``, issue 11): a candidate whose evidence sits in pasted, quoted
or fetched text (code blocks, ``>`` quotes, quoted strings, ``<tag>`` wrappers, a block after "here's the
README:"), after a fake fence or a role-played system turn, or near text that addresses a model ("note to the
summarizer", "record it as a decision", ``SYSTEM:``, a spoofed ``ΑPPROVED``) is dropped before merging, so it can
neither enter the log nor mark a real entry "(later rejected)" or stand in for it as a duplicate.  Explicit
markers (``APPROVED:`` lines) of a compaction summary never count: the summary is the harness model's text, not
the user's or the assistant's.

A dead end stated with a pronoun ("That didn't work because…") is pinned to the last failed tool call before
it (its command), else dropped.  "Going with option 2" names the option's text when a message lists it.

Merge rule (dedupe and reversals): entries are ordered by the time of the event that made them.  Two entries
are *about the same thing* when their normalized ``what`` is equal; with the same status also when their
content words are near-identical; with opposite statuses also when they overlap strongly or one's content
words are a subset of the other's.  An entry whose subject already stands with the same status is a duplicate
and is dropped (a replayed history, the same sentence in two messages).  The same action restated by the same
speaker with another scope qualifier ("delete the source files, keeping the Justfile" then "… (not the plugin
scripts)") is one choice: the later wording replaces the earlier.  An entry with the opposite status is
kept (the log stays append-only and chronological) and, when it rejects something approved earlier, the
earlier approvals get "(later rejected)" appended to their reasoning, so the final state wins and no earlier
approval reads as still standing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import (
    approvals, branches, choices, clauses, intl, paste, phrases, plans, proposals, questions, tools, trials, untrusted,
)
from pipeline.stages.rules.phrases import APPROVED, REJECTED
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, norm_key, quote, similar, strip_markup, tokens
from pipeline.state.model import Decision, Evidence

REASON_LIMIT = phrases.REASON_LIMIT
LATER_REJECTED = " (later rejected)"
PRONOUN_LOOKBACK = 15  # events
LATENT = "latent"  # origin of a plan kept only if later rejected (merge)
#: where an entry's qualifier starts: ", keeping …", ", not …", " (except …)", " - …"
_QUALIFIER = lazy_re(r",\s+(?:keeping|leaving|not|but\s+not|except|excluding|without|sem|n[aã]o|sin|no)\s|\s+\((?:not|except|excluding|keeping|without)\s", re.IGNORECASE)
SUMMARY_HISTORY_LIMIT = 2  # assistant messages before a compaction summary still count as "no history"
_OPTION_NAME = lazy_re(r"^(?:option|approach|choice|alternative|variant)\s*#?\s*([0-9]+|[A-Za-z])$", re.IGNORECASE)
DENIED = trials.DENIED
_SUMMARY_USER = lazy_re(
    r"\b(?:the\s+)?user\s+(?:explicitly\s+|then\s+|later\s+|also\s+)?(?P<v>approved|agreed\s+to|accepted|chose|"
    r"picked|selected|confirmed|opted\s+for|preferred|rejected|declined|vetoed|refused|said\s+no\s+to|"
    r"(?:did\s+not|didn't|does\s+not|doesn't)\s+want|asked\s+(?:me\s+)?not\s+to\s+use|told\s+me\s+not\s+to\s+use|"
    r"asked\s+(?:me\s+)?to\s+use|wants?\s+to\s+use|wanted\s+to\s+use)\s+(?P<x>[^.\n]+)",
    re.IGNORECASE,
)


@dataclass(slots=True)
class Cand:
    """A decision before merging: status, text, cited event ``ev`` and its quote, the event ``at`` whose time it
    takes, an ordering offset, and the rule that produced it."""

    status: str
    what: str
    reasoning: str
    ev: int
    quote: str
    at: int
    order: int
    origin: str


def _default_reason(origin: str, status: str) -> str:
    if origin == "user":
        return "stated by the user"
    if origin == "compaction-summary":
        return "stated in the compaction summary"
    if status == REJECTED:
        return "ruled out by the assistant"
    return "stated by the assistant"


def _foreign(s: Scan, text: str, start: int, end: int, focus: int | None, status: str, what: str,
             reasoning: str | None) -> bool:
    """True when a candidate quoting ``text[start:end]`` is not its speaker's own decision (``untrusted``); the
    reason is kept in ``s.screened``."""
    why = untrusted.decision_problem(text, start, end, focus, what, reasoning or "")
    if why is None:
        return False
    if not any(st == status and w == what for st, w, _ in s.screened):  # one report per entry, not per copy
        s.screened.append((status, what, why))
    return True


def _from_hits(s: Scan, i: int, origin: str) -> list[Cand]:
    text = s.events[i].text
    out: list[Cand] = []
    for h in phrases.hits_in(text, origin, explicit=origin != "compaction-summary"):
        if _foreign(s, text, h.start, h.end, h.focus, h.status, h.what, h.reasoning):
            continue
        what = h.what
        if h.pronoun:
            what = _resolve_pronoun(s, i)
            if not what:
                continue
        ref = _OPTION_NAME.match(what)
        if ref:
            what = _resolve_option_name(s, i, what, ref.group(1).lower())
        org = h.origin if origin != "compaction-summary" else origin
        q = quote(text, h.start, h.end, focus=h.focus)
        out.append(Cand(h.status, what, h.reasoning or _default_reason(origin, h.status), i, q, i, h.focus, org))
    return out


def _from_plans(s: Scan, i: int, hits: list[Cand]) -> list[Cand]:
    """The plan items and scope exclusions (``plans``) of assistant message ``i`` when the assistant acted on
    them; an item whose line already gave a phrasing hit is left to that hit."""
    text = s.events[i].text
    if not plans.acted_after(s.events, i):
        return []
    out: list[Cand] = []
    for what, reason, a, b in plans.plan_items(text) + plans.exclusions(text, s.spans(i)):
        lo = text.rfind("\n", a, max(a, b - 1)) + 1 or a  # the item's own line
        if any(lo <= c.order < b for c in hits):
            continue
        why = clauses.reason_text(reason) or reason
        if _foreign(s, text, lo, b, lo, APPROVED, what, why):
            continue
        out.append(Cand(APPROVED, what, why, i, quote(text, a, b, focus=lo), i, lo, "implicit"))
    return out


def _latent_plans(s: Scan, i: int, hits: list[Cand]) -> list[Cand]:
    """The assistant's plan sentences (``plans.stated_plans``) as ``latent`` candidates: kept by ``merge`` only
    when a later entry rejects them, so a reversal has the plan to mark "(later rejected)"."""
    text = s.events[i].text
    out: list[Cand] = []
    for what, a, b in plans.stated_plans(text, s.spans(i)):
        if any(a <= c.order < b for c in hits):
            continue  # screened by ``merge`` once kept: most plan sentences are never reversed
        out.append(Cand(APPROVED, what, "stated by the assistant", i, quote(text, a, b, focus=a), i, a, LATENT))
    return out


def _screened(s: Scan, found) -> list[Cand]:
    """``questions`` entries as candidates: quotes of the speaker's own words pass ``_foreign``, quotes of tool
    calls and results (the harness's record of the answer) the injection screen."""
    out: list[Cand] = []
    for status, what, why, ev, a, b, at in found:
        e = s.events[ev]
        q = quote(e.text, a, b)
        if not q:
            continue
        if e.kind in untrusted.OWN_WORDS and not questions.in_plan_block(e.text, a):
            if _foreign(s, e.text, a, b, a, status, what, why):
                continue
        elif untrusted.injection_problem(q, e.text, what, why):  # tool records and plan blocks
            s.screened.append((status, what, "its evidence sits in text that instructs a model (prompt injection)"))
            continue
        out.append(Cand(status, what, why, ev, q, at, 1 if status == REJECTED else 0, "user-approval"
                        if status == APPROVED else "user-rejection"))
    return out


def _question_tools(s: Scan) -> list[Cand]:
    """Question tools the user answered and plan tools the user accepted (``questions``)."""
    out: list[Cand] = []
    for i in s.calls:
        name = tools.tool(s.events[i])
        if name in questions.QUESTION_TOOLS:
            j = s.result_of.get(i)
            if j is not None and not s.events[j].is_error:
                out.extend(_screened(s, questions.from_question(s.events, i, j)))
        elif name in questions.PLAN_TOOLS:
            out.extend(_screened(s, questions.from_plan_tool(s.events, i, s.result_of.get(i))))
    return out


def _from_intl(s: Scan, i: int, origin: str) -> list[Cand]:
    """Non-English choices and rejections (``intl``) of event ``i``: a user's always, an assistant's approval
    only with a reason or a rejected alternative."""
    text = s.events[i].text
    out: list[Cand] = []
    for status, what, alt, reason, a, b in intl.hits(text):
        if origin == "user":
            why = f'user\'s instruction ("{clip(text[a:b].strip(), 150)}")' if status == APPROVED else (
                f'user said "{clip(text[a:b].strip(), 150)}"')
        else:
            if status == APPROVED and not (alt or reason):
                continue
            why = reason or (f"in favour of {alt}" if status == REJECTED and alt else
                             f"instead of {alt}" if alt else _default_reason(origin, status))
        if _foreign(s, text, a, b, a, status, what, why):
            continue
        out.append(Cand(status, what, why, i, quote(text, a, b, focus=a), i, a + (1 if status == REJECTED else 0), origin))
    return out


def _resolve_option_name(s: Scan, i: int, what: str, label: str) -> str:
    """"option 2" -> "option 2: <its text>" from the options listed in this message or the last 3 assistant
    messages before it; unchanged when none lists it."""
    tried = 0
    j: int | None = i
    while j is not None and tried < 4:
        if s.events[j].kind in ("assistant_text", "compaction"):
            for lab, body, _, _ in proposals.options_in(s.events[j].text):
                if lab == label and norm_key(body) != norm_key(what):
                    return clip(f"{what}: {body}", phrases.WHAT_LIMIT)
        tried += 1
        j = s.prev_assistant(j, stop_at_user=False)
    return what


def _rejected_tool_calls(s: Scan) -> list[Cand]:
    """A tool call the user declined (harness denial message): REJECTED "<tool> <target>", in the user's words
    when a prompt follows right after."""
    out: list[Cand] = []
    for j in s.results:
        ev = s.events[j]
        if not ev.is_error or not DENIED.search(ev.text[:300]):
            continue
        call = s.call_of.get(j)
        if call is None:
            continue
        cev = s.events[call]
        if tools.tool(cev) in questions.PLAN_TOOLS and questions.is_accept_flow(s.events, call):
            continue  # accept-and-clear: the plan was approved (``questions``)
        what = _declined_what(s, cev)
        nxt = next((k for k in range(j + 1, min(j + 5, len(s.events))) if s.events[k].kind == "user_prompt"), None)
        if nxt is not None and s.events[nxt].text.strip():
            text = s.events[nxt].text
            a = len(text) - len(text.lstrip())
            q = quote(text, a, len(text.rstrip()))
            why = f'user declined the tool call: "{clip(text, 150)}"'
            out.append(Cand(REJECTED, clip(what, phrases.WHAT_LIMIT), why, nxt, q, nxt, -1, "user-rejection"))
        else:
            reason = _DECLINE_REASON.search(ev.text)
            if reason and reason.group(1).strip():  # Claude Code: "The user provided the following reason …: <words>"
                a, b = reason.span(1)
                why = f'user declined the tool call: "{clip(ev.text[a:b].strip(), 150)}"'
                out.append(Cand(REJECTED, clip(what, phrases.WHAT_LIMIT), why, j, quote(ev.text, a, b), j, 0,
                                "user-rejection"))
                continue
            q = quote(ev.text, 0, len(ev.text))
            out.append(Cand(REJECTED, clip(what, phrases.WHAT_LIMIT), "user declined the tool call", j, q, j, 0, "user-rejection"))
    return out


#: the reason a user typed when declining a call, as the harness records it
_DECLINE_REASON = lazy_re(r"(?:following\s+reason\s+for\s+the\s+rejection|reason)\s*:\s*(.+?)\s*$", re.I | re.S)


def _declined_what(s: Scan, cev) -> str:
    """A declined tool call in words: "running `cmd`", "editing src/x.py", "the plan: <title>", "<tool> <target>"."""
    cmd = tools.command_of(cev)
    if cmd:
        return f"running `{cmd}`"
    name = tools.tool(cev)
    paths = tools.edit_paths(cev)
    if paths:
        shown = ", ".join(tools.relative(p, s.meta.cwd) for p in paths[:3])
        return ("creating " if tools.is_create(cev) else "editing ") + shown
    if name in questions.PLAN_TOOLS:
        title = questions.plan_title(cev.text or "")
        return f"the plan: {title}" if title else "the proposed plan"
    target = clip(strip_markup(cev.target or ""), 100)
    return f"{(cev.tool_name or 'tool')} {target}".strip()


def _resolve_pronoun(s: Scan, i: int) -> str | None:
    """The command (or tool and target) of the last failed tool call shortly before event ``i``."""
    lo = max(0, i - PRONOUN_LOOKBACK)
    for j in range(i - 1, lo - 1, -1):
        ev = s.events[j]
        if ev.kind == "user_prompt":
            return None
        if ev.kind == "tool_result" and tools.failed(ev):
            call = s.call_of.get(j)
            if call is None:
                continue
            cev = s.events[call]
            cmd = tools.command_of(cev)
            if cmd:
                return clip(f"`{cmd}`", phrases.WHAT_LIMIT)
            target = (cev.target or "").strip()
            if cev.tool_name and target:
                return clip(f"{cev.tool_name} on {target}", phrases.WHAT_LIMIT)
    return None


def _summary_usable(s: Scan, i: int) -> bool:
    """A compaction summary that follows recorded history only paraphrases it: its decisions are used only when
    at most ``SUMMARY_HISTORY_LIMIT`` main-thread assistant messages precede it (the history it summarises is
    not in this transcript, e.g. a session continued in a new file)."""
    before = 0
    for j in s.assistants:
        if j >= i:
            break
        before += 1
        if before > SUMMARY_HISTORY_LIMIT:
            return False
    return True


def collect(s: Scan) -> list[Cand]:
    """All decision candidates of the transcript, unmerged, in event order."""
    out: list[Cand] = []
    out.extend(_rejected_tool_calls(s))
    out.extend(_question_tools(s))
    for what, why, ev, a, b in choices.propose(s):
        text = s.events[ev].text
        if s.events[ev].kind == "assistant_text" and _foreign(s, text, a, b, a, APPROVED, what, why):
            continue
        out.append(Cand(APPROVED, what, why, ev, quote(text, a, b), ev, a, "implicit"))
    kinds = sorted(
        [(i, "a") for i in s.assistants] + [(i, "u") for i in s.users] + [(i, "c") for i in s.compactions]
    )
    seen_texts: set[str] = set()
    for i, k in kinds:
        if k == "a":
            text = s.events[i].text
            if text in seen_texts:  # a replayed message: its decisions are already in, and must not re-approve
                continue
            seen_texts.add(text)
            hits = _from_hits(s, i, "implicit")
            out.extend(hits)
            out.extend(_from_plans(s, i, hits))
            out.extend(_latent_plans(s, i, hits))
            out.extend(_from_intl(s, i, "implicit"))
        elif k == "c":
            if _summary_usable(s, i):
                out.extend(_from_hits(s, i, "compaction-summary"))
                out.extend(_summary_user(s, i))
        else:
            text = s.events[i].text
            if paste.is_template(text):
                continue  # an expanded command or skill template: the harness's words, no decision of the user's
            own = " ".join(paste.own_words(text).split())
            for h in phrases.explicit_hits(text, "explicit"):
                if _foreign(s, text, h.start, h.end, h.focus, h.status, h.what, h.reasoning):
                    continue
                if " ".join(text[h.start:h.end].split()) not in own:
                    s.screened.append((h.status, h.what, "its evidence sits in pasted output, not the user's words"))
                    continue
                q = quote(text, h.start, h.end, focus=h.focus)
                out.append(Cand(h.status, h.what, h.reasoning or "stated by the user", i, q, i, h.focus, "explicit"))
            out.extend(_from_intl(s, i, "user"))
            out.extend(_screened(s, questions.from_prompt(s.events, i, s.prev_assistant(i, stop_at_user=False))))
            for f in approvals.found_in_prompt(s, i):
                if _foreign(s, s.events[f.ev].text, f.start, f.end, f.order if f.ev == f.at else None, f.status, f.what,
                            f.reasoning):
                    continue
                if f.ev == i and own and " ".join(text[f.start:f.end].split()) not in own:
                    s.screened.append((f.status, f.what, "its evidence sits in pasted output, not the user's words"))
                    continue
                out.append(Cand(f.status, f.what, f.reasoning, f.ev, approvals.quote_of(s, f), f.at, f.order, f.origin))
    return out


def _summary_user(s: Scan, i: int) -> list[Cand]:
    """"The user approved / rejected / chose X" sentences of a compaction summary."""
    text = s.events[i].text
    out: list[Cand] = []
    for m in _SUMMARY_USER.finditer(text):
        verb = m.group("v").lower()
        neg = any(w in verb for w in ("reject", "declin", "veto", "refus", "said no", "not", "n't"))
        x, _, reason = clauses.split_tail(m.group("x"), over=True)
        what = clauses.clean(x)
        if not what or len(what.split()) > 25:
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end < 0 else line_end
        why = clauses.reason_text(reason) if reason else None
        status = REJECTED if neg else APPROVED
        if _foreign(s, text, line_start, line_end, m.start(), status, what, why):
            continue
        q = quote(text, line_start, line_end, focus=m.start())
        out.append(
            Cand(REJECTED if neg else APPROVED, clip(what, phrases.WHAT_LIMIT), why or f"user {verb} it (per the compaction summary)",
                 i, q, i, m.start(), "compaction-summary")
        )
    return out


@dataclass(slots=True)
class _Group:
    key: str
    toks: frozenset[str]
    status: str
    members: list[int]
    origin: str = ""
    head: str = ""


def _key(what: str) -> str:
    """``norm_key``, or for a text in a script it drops entirely (Chinese, Korean, Japanese: "改用数据库") the text
    itself, lower case and one-spaced, so such an entry is still kept and deduplicated."""
    return norm_key(what) or " ".join(what.lower().split())


def _head(what: str) -> str:
    """The action an entry qualifies ("delete the source files" of "delete the source files, keeping the
    Justfile" or "… (not the scripts)"), normalized; "" when ``what`` has no qualifier or the action is under
    three content words."""
    m = _QUALIFIER.search(what)
    if m is None:
        return ""
    lead = what[: m.start()]
    return norm_key(lead) if len(tokens(lead)) >= 3 else ""


def _same_subject(key: str, toks: frozenset[str], g: _Group, *, opposite: bool, origin: str = "") -> bool:
    """Same thing: equal keys; for the same status a near-identical wording (Jaccard >= 0.8, or a 3+ word
    phrase covered to 90 %); for opposite statuses a looser overlap or one word set inside the other."""
    if key == g.key:
        return True
    if not opposite:
        return similar(toks, g.toks, jaccard=0.8, contain=0.9) and min(len(toks), len(g.toks)) >= 3 or (
            bool(toks) and toks == g.toks
        ) or (  # one speaker restating: "Redis for the counters" / "Redis for the rate-limit counters"
            origin == g.origin and 2 <= min(len(toks), len(g.toks))
            and max(len(toks), len(g.toks)) <= 2 * min(len(toks), len(g.toks)) and (toks <= g.toks or g.toks <= toks)
        )
    if similar(toks, g.toks, jaccard=0.6, contain=0.8):
        return True
    return bool(toks) and bool(g.toks) and (toks <= g.toks or g.toks <= toks)


class _GroupIndex:
    """The groups by key, by head and by token: ``_same_subject`` only holds for an equal key or a shared token
    (and a restatement needs an equal head), so only those groups need the test; a loop over all of them costs
    n² on a long session.  A group's key, head and tokens never change once it is made."""

    __slots__ = ("_by_key", "_by_tok")

    def __init__(self) -> None:
        self._by_key: dict[str, list[int]] = {}
        self._by_tok: dict[str, list[int]] = {}

    def add(self, n: int, key: str, toks: frozenset[str], head: str) -> None:
        self._by_key.setdefault(key, []).append(n)
        if head:
            self._by_key.setdefault("\x00" + head, []).append(n)
        for t in toks:
            self._by_tok.setdefault(t, []).append(n)

    def near(self, key: str, toks: frozenset[str], head: str) -> set[int]:
        out = set(self._by_key.get(key, ()))
        if head:
            out.update(self._by_key.get("\x00" + head, ()))
        for t in toks:
            out.update(self._by_tok.get(t, ()))
        return out


def merge(s: Scan, cands: list[Cand]) -> list[Cand]:
    """Dedupe and order candidates by the module's merge rule; returns the kept ones, chronological."""
    cands = sorted(cands, key=lambda c: (c.at, c.order))
    originals = [(_key(c.what), tokens(c.what)) for c in cands if c.origin != "compaction-summary"]
    kept: list[Cand] = []
    dropped: set[int] = set()
    groups: list[_Group] = []
    index = _GroupIndex()
    for c in cands:
        key = _key(c.what)
        if not key:
            continue
        toks = tokens(c.what) or frozenset(key.split())
        if c.origin == "compaction-summary" and any(
            key == k or similar(toks, t, jaccard=0.5, contain=0.6) or (toks and t and (toks <= t or t <= toks))
            for k, t in originals
        ):
            continue
        head = _head(c.what)
        near = [groups[n] for n in sorted(index.near(key, toks, head), reverse=True)]  # newest first, as a loop
        group = next((g for g in near if _same_subject(key, toks, g, opposite=False, origin=c.origin)), None)
        if group is None and c.origin != LATENT:
            again = next((g for g in near if g.status == c.status and g.origin == c.origin and head
                          and g.head == head), None) if head else None
            if again is not None:  # the same action restated with another qualifier: the later wording stands
                dropped.update(k for k in again.members if kept[k].status == c.status)
                kept.append(c)
                again.members = [k for k in again.members if k not in dropped] + [len(kept) - 1]
                continue
        if group is None:
            group = next((g for g in near if g.status != c.status and _same_subject(key, toks, g, opposite=True)), None)
        if group is not None and group.status == c.status:
            if c.origin != LATENT and all(kept[k].origin == LATENT for k in group.members):
                dropped.update(group.members)  # the plan is stated for real now: that entry stands instead
                kept.append(c)
                group.members = [len(kept) - 1]
            continue
        if c.origin == LATENT and group is not None:
            continue  # a plan sentence never reopens a subject already decided the other way
        kept.append(c)
        if group is None:
            index.add(len(groups), key, toks, head)
            groups.append(_Group(key, toks, c.status, [len(kept) - 1], c.origin, head))
            continue
        if c.status == REJECTED:
            for idx in group.members:
                prev = kept[idx]
                if prev.status == APPROVED and not prev.reasoning.endswith(LATER_REJECTED):
                    prev.reasoning = clip(prev.reasoning, REASON_LIMIT - len(LATER_REJECTED)) + LATER_REJECTED
        group.status = c.status
        group.members.append(len(kept) - 1)
    out = []
    for k, c in enumerate(kept):
        if k in dropped:
            continue
        if c.origin == LATENT:
            if not c.reasoning.endswith(LATER_REJECTED):
                continue  # a plan nobody reversed is no decision
            text = s.events[c.ev].text
            if _foreign(s, text, c.order, c.order + len(c.quote), c.order, APPROVED, c.what, "stated by the assistant"):
                continue
            c.origin = "implicit"
        out.append(c)
    return out


def build(s: Scan) -> list[Decision]:
    """The Decision Log entries (chronological) with evidence, timestamps and origins."""
    out: list[Decision] = []
    gone = branches.abandoned(s.events)  # a branch the user rewound away from decides nothing
    cands = [c for c in collect(s) if c.ev not in gone and c.at not in gone] if gone else collect(s)
    for c in merge(s, cands):
        if not c.quote:
            continue
        out.append(
            Decision(
                timestamp=s.ts(c.at),
                status=c.status,
                what=c.what,
                reasoning=clip(c.reasoning, REASON_LIMIT),
                evidence=Evidence(event_index=c.ev, quote=c.quote),
                origin=c.origin,
            )
        )
    return out
