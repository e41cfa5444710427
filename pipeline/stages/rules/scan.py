"""One linear pass over a transcript's events: indexes by kind, tool call -> result links, timestamps.

Every rule module works from a ``Scan`` instead of re-walking ``Transcript.events`` (the pre-compact hook runs
distil on a 5 MB transcript inside a few tens of milliseconds).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from pipeline.stages.rules.text import norm_ts, sentence_spans
from pipeline.transcripts.model import Event, Transcript, TranscriptMeta


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
    task_texts: dict[int, str] = field(default_factory=dict)
    #: per-scan results other rule modules compute once (``episodes.episodes``, ``episodes.check_runs``,
    #: ``reports``' changing calls)
    memo: dict = field(default_factory=dict)

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


def scan(transcript: Transcript) -> Scan:
    """Build the ``Scan`` of ``transcript`` in one pass (O(number of events))."""
    s = Scan(events=transcript.events, meta=transcript.meta)
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
    return s
