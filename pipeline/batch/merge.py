"""``duck-tape batch --merge CONTEXT.md``: the batch's state files, oldest session first, for one merge into
CONTEXT.md with one combined changelog (DESIGN.md "CONTEXT.md (Tier 1)"; issue 6, item 1).

The merge itself (translate, merge rules, preview, approval, locked write, changelog) is the CONTEXT.md
engine's, called through ``pipeline.commands.context.run_merge`` (as ``recover --merge`` does); this module
only checks that the engine is there, orders the sessions, parses their state files and names them
(``<session id>.state.md``) for the merge's Notes lines.
"""

from __future__ import annotations

import importlib.util
import os

API = "pipeline.context.api"


def available() -> bool:
    """True when the CONTEXT.md merge engine (``pipeline.context.api``) can be imported."""
    try:
        return importlib.util.find_spec(API) is not None
    except (ImportError, ValueError):
        return False


def chronological(rows: list[dict]) -> list[dict]:
    """The ``ok`` rows ordered by session end time (else start time), then path: later sessions merge last, so
    their decisions supersede older ones on conflict (DESIGN.md merge rules: "incoming supersedes")."""
    ok = [r for r in rows if r["status"] == "ok" and r.get("text")]
    return sorted(ok, key=lambda r: (r.get("end") or r.get("start") or "", r["path"]))


def states_and_names(rows: list[dict]) -> tuple[list, list[str]]:
    """The ``AgentState`` of every ``ok`` row, in ``chronological`` order, and the name of each one's state file in
    ``--out``: the names go to the merge's ``Merged state file <name>`` Notes lines, which would otherwise say
    ``<stamp>-recovered.state.md``, the name of a ``.duck-tape`` store file, not of the batch's
    ``<session id>.state.md`` (``outputs.output_name``).  Raises InputError naming the state file that does not
    parse (it was validated when written, so this means a bug)."""
    from pipeline.batch.outputs import output_name
    from pipeline.state.parse import parse

    ordered = chronological(rows)
    found = [parse(row["text"], path=row.get("output_path") or row["path"]) for row in ordered]
    names = [os.path.basename(row["output_path"]) if row.get("output_path") else output_name(row) for row in ordered]
    return found, names
