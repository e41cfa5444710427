"""One linear pass over a transcript's events: indexes by kind, tool call -> result links, timestamps.

Every rule module works from a ``Scan`` instead of re-walking ``Transcript.events`` (the pre-compact hook runs
distil on a 5 MB transcript inside a few tens of milliseconds).

Reading window: the sentence-level rules (decisions, facts, constraints, task wording) cost time per character
of message text, so a session whose messages (prompts, answers, sub-agent results, compaction summaries) hold
more than ``READ_CHARS`` characters is read in two windows: its first messages up to a quarter of that, and its
last ones up to the rest.  The messages in between are left out of the indexes (``unread`` counts them, and the
state file's Re-derivation says so); tool calls, results and todo lists are all kept.  ``windowed`` applies the
same window to a ``Transcript`` before it is masked and distilled (``engines.build_state``): the messages past it
are taken out of its events, so no section can quote them and masking them costs nothing.  No real session we know of
comes near it; a 5 MB transcript of nothing but prose does.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from pipeline.stages.rules.text import norm_ts, sentence_spans
from pipeline.transcripts.model import Event, Transcript, TranscriptMeta

READ_CHARS = 500_000  # characters of message text read at most (a quarter from the start, the rest from the end)


@dataclass(slots=True)
class Scan:
    """Indexes into ``events`` (all lists hold event indexes, ascending).

    ``assistants`` holds main-thread assistant messages only (an ``assistant_text`` with ``agent`` set is a
    sub-agent's chatter and is left out).  ``result_of`` maps a tool call's index to its result's index
    (matched by ``call_id``, else to the next result without one); ``call_of`` is the reverse map.
    """

    events: list[Event]
    meta: TranscriptMeta
    users: list[int] = field(default_factory=list)
    assistants: list[int] = field(default_factory=list)
    compactions: list[int] = field(default_factory=list)
    subagent_results: list[int] = field(default_factory=list)
    todo_lists: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    results: list[int] = field(default_factory=list)
    result_of: dict[int, int] = field(default_factory=dict)
    call_of: dict[int, int] = field(default_factory=dict)
    first_ts: int = 1 << 62  # index of the first event that has a timestamp
    screened: list[tuple[str, str, str]] = field(default_factory=list)  # decisions.py: (status, what, why) dropped
    _ts: dict[int, str] = field(default_factory=dict)
    _spans: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    # workflow.py's per-scan memo: the task prompts (``workflow.tasks``) and each prompt's own words
    # (``workflow.prompt_task_text``); Workflow and Current both ask, and the own-words screen is costly on prose
    tasks_memo: list[int] | None = None
    #: other per-scan results several rule modules ask for (key: the asking module's name for it)
    memo: dict = field(default_factory=dict)
    task_texts: dict[int, str] = field(default_factory=dict)
    #: messages left out by the reading window: (how many, their characters, first and last line of the file;
    #: event numbers, 1-based, where the reader gave no line)
    unread: tuple[int, int, int, int] | None = None
    #: lines the reader's byte window left out (``ReadReport.window``: first line, last line, bytes)
    lines_unread: tuple[int, int, int] | None = None

    def spans(self, index: int) -> list[tuple[int, int]]:
        """Sentence spans of event ``index``'s text (``text.sentence_spans``), computed once per event."""
        got = self._spans.get(index)
        if got is None:
            got = sentence_spans(self.events[index].text)
            self._spans[index] = got
        return got

    def ts(self, index: int) -> str:
        """Timestamp for event ``index`` as ``YYYY-MM-DDTHH:MM:SSZ``.

        Rule (task brief): the event's own timestamp, else the nearest earlier event's, else
        ``meta.start_time``, else the nearest later event's, else ``meta.end_time``, else ``""`` (weave then
        uses the creation time).
        """
        cached = self._ts.get(index)
        if cached is not None:
            return cached
        events = self.events
        found = ""
        if index >= self.first_ts:
            for i in range(index, self.first_ts - 1, -1):
                raw = events[i].timestamp
                if raw:
                    found = norm_ts(raw) or ""
                    if found:
                        break
        if not found:
            found = norm_ts(self.meta.start_time) or ""
        if not found:
            for i in range(max(self.first_ts, index + 1), len(events)):
                raw = events[i].timestamp
                if raw:
                    found = norm_ts(raw) or ""
                    if found:
                        break
        if not found:
            found = norm_ts(self.meta.end_time) or ""
        self._ts[index] = found
        return found

    def prev_assistant(self, index: int, *, stop_at_user: bool = True) -> int | None:
        """Index of the last main-thread assistant message before event ``index`` (None when a user prompt
        comes first and ``stop_at_user``, or when there is none)."""
        for i in range(index - 1, -1, -1):
            kind = self.events[i].kind
            if kind == "assistant_text" and self.events[i].agent is None and self.events[i].text.strip():
                return i
            if stop_at_user and kind in ("user_prompt", "compaction"):
                return None
        return None


def scan(transcript: Transcript, read_chars: int | None = None) -> Scan:
    """Build the ``Scan`` of ``transcript`` in one pass (O(number of events)), with the reading window of
    ``read_chars`` characters (default ``READ_CHARS``; 0 reads every message)."""
    s = Scan(events=transcript.events, meta=transcript.meta, lines_unread=transcript.report.window,
             unread=transcript.report.unread)
    by_id: dict[str, int] = {}
    no_id: deque[int] = deque()
    for i, ev in enumerate(transcript.events):
        kind = ev.kind
        if ev.timestamp and s.first_ts > i:
            s.first_ts = i
        if kind == "user_prompt":
            s.users.append(i)
        elif kind == "assistant_text":
            if ev.agent is None:
                s.assistants.append(i)
        elif kind == "tool_call":
            s.calls.append(i)
            if ev.call_id:
                by_id[ev.call_id] = i
            else:
                no_id.append(i)
        elif kind == "tool_result":
            s.results.append(i)
            call = by_id.pop(ev.call_id, None) if ev.call_id else None
            if call is None and not ev.call_id and no_id:
                call = no_id.popleft()
            if call is not None:
                s.result_of[call] = i
                s.call_of[i] = call
        elif kind == "compaction":
            s.compactions.append(i)
        elif kind == "subagent_result":
            s.subagent_results.append(i)
        elif kind == "todo_list":
            s.todo_lists.append(i)
    if s.unread is None:  # a transcript ``windowed`` already took the window of (masking may lengthen a message)
        _window(s, READ_CHARS if read_chars is None else read_chars)
    return s


def _kept(events: list[Event], messages: list[int], budget: int) -> set[int] | None:
    """The messages (event indexes, ascending) the window keeps, or None when all of them fit ``budget``."""
    total = sum(len(events[i].text) for i in messages)
    if budget <= 0 or total <= budget:
        return None
    keep: set[int] = set()
    used = 0
    for i in messages:  # the opening: the task and the first answers
        used += len(events[i].text)
        if used > budget // 4:
            break
        keep.add(i)
    used = 0
    for i in reversed(messages):
        used += len(events[i].text)
        if used > budget - budget // 4 and keep:
            break
        keep.add(i)
    return keep


def _unread(events: list[Event], left: list[int]) -> tuple[int, int, int, int]:
    first, last = events[left[0]], events[left[-1]]
    return (len(left), sum(len(events[i].text) for i in left), first.line or left[0] + 1, last.line or left[-1] + 1)


def _window(s: Scan, budget: int) -> None:
    """Apply the reading window (module rules) to ``s``'s message indexes; ``budget`` <= 0 reads everything."""
    lists = (s.users, s.assistants, s.compactions, s.subagent_results)
    messages = sorted(i for lst in lists for i in lst)
    keep = _kept(s.events, messages, budget)
    if keep is None:
        return
    left = [i for i in messages if i not in keep]
    if not left:
        return
    s.unread = _unread(s.events, left)
    for lst in lists:
        lst[:] = [i for i in lst if i in keep]


def _is_message(ev: Event) -> bool:
    return ev.kind in ("user_prompt", "compaction", "subagent_result") or (ev.kind == "assistant_text" and ev.agent is None)


def windowed(transcript: Transcript, read_chars: int | None = None) -> Transcript:
    """``transcript`` without the messages past the reading window (``READ_CHARS``, or ``read_chars``; 0 keeps
    all), its events renumbered, ``report.unread`` naming what was taken out; the same object when all fit."""
    from dataclasses import replace

    events = transcript.events
    messages = [i for i, ev in enumerate(events) if _is_message(ev)]
    keep = _kept(events, messages, READ_CHARS if read_chars is None else read_chars)
    if keep is None:
        return transcript
    left = [i for i in messages if i not in keep]
    if not left:
        return transcript
    drop = set(left)
    kept = [replace(ev, index=n) for n, ev in enumerate(ev for i, ev in enumerate(events) if i not in drop)]
    report = replace(transcript.report, unread=_unread(events, left))
    return replace(transcript, events=kept, report=report)
