"""Choices the agent made and reported with their purpose (issue 21 §2: "the agent's own choices ('replaced X
with Y', 'switched to')").

An agent reports its choices where it sums up: the messages after a turn's last change, in a turn that changed
something (``reports``'s reporting messages) and the messages of the commits it made (``git commit -m`` / a heredoc; only commits that went through,
``tools.commit_done``).  A line of those — a list item or a sentence — is a choice when it:

* opens with a change verb: in the past in a report ("Added", "Removed", "Replaced", "Switched"), also as an
  imperative in a commit message ("Use", "Add", "改用", "추가", "置き換え": ``plans``' item verbs), never a gerund
  (a plan's "Adding a retry wrapper…" waits for its answer), and
* gives its purpose or reason (``plans``' purpose clause: "to …", "so that …", "because …", "— …", "(…)", "para
  …", "为了…", "위해", "ために"), and
* names something distinctive (``factprune.distinctive``) in what it chose.

The choice is APPROVED, its reasoning the purpose clause, origin ``implicit``.  A session gets at most
``max_choices`` of them: those naming the most distinctive things, the later first on ties (the summing-up of the
work that stood).
"""

from __future__ import annotations

import math
import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import plans, tools
from pipeline.stages.rules.factprune import distinctive
from pipeline.stages.rules.scan import Scan
from pipeline.stages.rules.text import clip, sentence_spans, strip_markup

WHAT_LIMIT = 160
REASON_LIMIT = 200

#: a change verb in the past tense (the imperative forms are ``plans``' item verbs)
_DONE = lazy_re(
    r"^(?:\*\*)?(?:added|removed|replaced|switched|moved|used|changed|kept|dropped|introduced|made|set|disabled|"
    r"enabled|wrapped|cached|pinned|limited|split|swapped|stored|raised|lowered|applied|extracted|renamed|excluded|"
    r"skipped|reverted|deferred|adopted|chose|picked|went\s+with)\b(?:\*\*)?"
)


#: verbs whose "to" names where the change went ("switched X to Y", "moved X to Y")
_DESTINATION = lazy_re(r"^(?:\*\*)?(?:switched|moved|changed|renamed|set|raised|lowered|limited|migrated|upgraded|downgraded|"
                       r"pinned|bumped|switch|move|change|rename|set|raise|lower|limit|migrate|upgrade|downgrade|pin|bump)\b",
                       re.IGNORECASE)


def max_choices(n_events: int) -> int:
    """How many reported choices a session of ``n_events`` events keeps: 2, one more per doubling past 200."""
    return 2 + max(0, int(math.log2(max(1, n_events) / 200))) if n_events > 200 else 2


def _choice(line: str, *, commit: bool) -> tuple[str, str] | None:
    """``(what, why)`` when ``line`` is a reported choice (module rules), else None.  A report states what was done
    (past tense); a commit message may use the imperative ("Add X to …") but never a gerund (a plan's wording)."""
    body = strip_markup(line)
    verb = plans._ITEM_VERB.match(body) if commit else None
    if not (_DONE.match(body.lower()) or (verb and not verb.group(0).lower().endswith("ing"))):
        return None
    m = plans._PURPOSE.search(body)
    if m and _DESTINATION.match(body) and m.group(0).strip().lower().startswith("to"):
        m = plans._PURPOSE.search(body, m.end())  # "switched X to Y so that …": "to Y" is where, not why
    if not m or m.start() < 8:
        return None
    what, why = body[: m.start()].strip(" ,;:-—–("), body[m.end():].strip(" )")
    if len(why) < 6 or not distinctive(what):
        return None
    return clip(what, WHAT_LIMIT), clip(why, REASON_LIMIT)


def propose(s: Scan) -> list[tuple[str, str, int, int, int]]:
    """``(what, why, event, start, end)`` of the reported choices kept (module rules), in transcript order."""
    from pipeline.stages.rules.reports import _reporting, turns

    found: list[tuple[int, int, str, str, int, int, int]] = []
    for start, end in turns(s):
        for i in _reporting(s, start, end, changed=True):
            text = s.events[i].text
            for a, b in sentence_spans(text):
                got = _choice(text[a:b], commit=False)
                if got:
                    found.append((len(distinctive(got[0])), i, got[0], got[1], i, a, b))
    for call in s.calls:
        cmd = tools.raw_command(s.events[call])
        if "commit" not in cmd or tools.commit_done(cmd, s.events[s.result_of[call]] if call in s.result_of else None) is None:
            continue
        text = s.events[call].text
        msg_at = text.find("commit")
        for a, b in sentence_spans(text[msg_at:]):
            got = _choice(text[msg_at + a: msg_at + b], commit=True)
            if got:
                found.append((len(distinctive(got[0])), call, got[0], got[1], call, msg_at + a, msg_at + b))
    seen: set[str] = set()
    unique = []
    for f in sorted(found, key=lambda f: (-f[0], -f[1])):
        key = f[2].lower()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    kept = unique[: max_choices(len(s.events))]
    return [(what, why, ev, a, b) for _, _, what, why, ev, a, b in sorted(kept, key=lambda f: (f[4], f[5]))]
