"""Branches the user rewound away from (issue 13 §1.4; Claude Code ``parentUuid`` trees).

Claude Code writes every record with its ``uuid`` and the ``parentUuid`` it continues.  When the user rewinds
(edits an earlier prompt, or restores a checkpoint) the new line's parent is an earlier record, so the file holds
a tree: the conversation that stands is the path from the last record back to its root; a subtree hanging off
that path that does not lead to the last record is a branch the user abandoned.

Rule: the *main path* is the chain of ``parent_uuid`` links from the last main-thread event with a uuid.  An
event is *abandoned* when its own chain, followed upwards, reaches a main-path node without passing through the
path first — i.e. it sits in a sibling subtree of the path.  A chain that ends without touching the path (a
``parentUuid`` no record carries, a ``null`` after a compaction whose ``logicalParentUuid`` is missing, another
session in the same file) proves nothing and is kept.  Transcripts without uuids have no abandoned events.
"""

from __future__ import annotations

from pipeline.transcripts.model import Event


_last: list = [None, -1, set()]  # (events list, its length, result): decisions and position ask in turn


def abandoned(events: list[Event]) -> set[int]:
    """Indexes of the events that sit in a branch the user rewound away from (see module rule)."""
    if _last[0] is events and _last[1] == len(events):
        return _last[2]
    got = _abandoned(events)
    _last[:] = [events, len(events), got]
    return got


def _abandoned(events: list[Event]) -> set[int]:
    parent: dict[str, str | None] = {}
    leaf = None
    for e in events:
        if e.uuid is None:
            continue
        if e.uuid not in parent:
            parent[e.uuid] = e.parent_uuid
        if e.agent is None:
            leaf = e.uuid
    if leaf is None:
        return set()
    path: set[str] = set()
    u: str | None = leaf
    while u is not None and u not in path:
        path.add(u)
        u = parent.get(u)
    if len(path) == len(parent):
        return set()
    top: dict[str, str | None] = {}  # off-path node -> the root of its sibling subtree (None: not provably off)
    for node in parent:
        if node in path or node in top:
            continue
        chain = [node]
        v = parent.get(node)
        while v is not None and v in parent and v not in path and v not in top and len(chain) <= len(parent):
            chain.append(v)
            v = parent.get(v)
        if v is not None and v in path:
            root: str | None = chain[-1]
        elif v is not None and v in top:
            root = top[v]
        else:
            root = None  # the chain is broken or starts a new root: nothing proves it was abandoned
        for c in chain:
            top[c] = root
    # a side branch of tool results only is how parallel tool calls are linked, not a rewind: a subtree counts
    # when it holds a turn of the conversation (a prompt or an assistant message)
    talk = {top[e.uuid] for e in events if e.uuid in top and top[e.uuid] and e.kind in ("user_prompt", "assistant_text")}
    return {e.index for e in events if e.uuid in top and top[e.uuid] in talk} if talk else set()
