"""Review findings (issue 13, §1.5): a code-review sub-agent's structured answer.

Codex review sub-agents (and review prompts in other harnesses) answer with a JSON object holding
``findings: [{title, body, priority?, code_location?}]`` (FORMATS.md §4 "sub-agents": the same list is
``exited_review_mode.review_output.findings[]``).  Each finding is a fact: its title and the first sentence of
its body ("[P1] Unsupported format errors return wrong payload shape: When `transcribe_file` raises …").  The
evidence quote is the title as it stands in the event's text.  Text that is not such an object yields nothing;
only a text that starts with ``{`` (after a code fence) is parsed, so the cost is one ``json.loads`` per such text.
"""

from __future__ import annotations

import json

from pipeline.lazyre import lazy_re

MAX_FINDINGS = 6
BODY_LIMIT = 220

_SENT = lazy_re(r"(?<=[.!?])\s+(?=[A-Z`(\[])")


def findings(text: str) -> list[tuple[str, int, int]]:
    """``(fact text, start, end)`` for each finding of the review object in ``text`` (start/end: the span of
    the title inside ``text``); [] when ``text`` is not one."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0].strip()
    if not body.startswith("{") or '"findings"' not in body:
        return []
    try:
        data = json.loads(body)
    except ValueError:
        return []
    items = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    out: list[tuple[str, int, int]] = []
    for item in items[:MAX_FINDINGS]:
        if not isinstance(item, dict):
            continue
        title = " ".join(str(item.get("title") or "").split())
        detail = " ".join(str(item.get("body") or "").split())
        if not title:
            continue
        at = text.find(json.dumps(title, ensure_ascii=False)[1:-1])
        if at < 0:
            continue
        first = _SENT.split(detail, 1)[0] if detail else ""
        if len(first) > BODY_LIMIT:
            first = first[: BODY_LIMIT - 1] + "…"
        fact = f"{title.rstrip('.:')}: {first}" if first else title
        out.append((fact, at, at + len(json.dumps(title, ensure_ascii=False)) - 2))
    return out
