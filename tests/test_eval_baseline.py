"""evals.baseline: today's keyword-only auto-checkpoint, rule for rule (issue 3 "Engines")."""

from __future__ import annotations

import json
from pathlib import Path

from evals.baseline import FACTS_PLACEHOLDER, checkpoint, extract
from evals.runner import NOW
from evals.sections import views

ROOT = Path(__file__).resolve().parent.parent


def _cc(tmp_path: Path) -> Path:
    env = {"cwd": "/home/dev/x", "sessionId": "s1", "version": "2.1.20", "gitBranch": "main", "isSidechain": False}
    lines = [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": "s1"},
        {**env, "type": "user", "uuid": "u1", "timestamp": "2026-01-01T10:00:00.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "add retries to the client"}]}},
        {**env, "type": "assistant", "uuid": "a1", "timestamp": "2026-01-01T10:00:05.000Z",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "text", "text": "Looking at it.\nGoing with urllib3 Retry because it backs off.\nDone soon."},
             {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "/home/dev/x/http.py"}},
             {"type": "tool_use", "id": "t2", "name": "Grep", "input": {"pattern": "Retry"}}]}},
        {**env, "isSidechain": True, "type": "assistant", "uuid": "a2", "timestamp": "2026-01-01T10:00:06.000Z",
         "message": {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "DECISION: use curl"}]}},
        {**env, "type": "user", "uuid": "u2", "timestamp": "2026-01-01T10:01:00.000Z",
         "message": {"role": "user", "content": "ok, and REJECTED: the hand loop, we will use Retry"}},
        {**env, "type": "assistant", "uuid": "a3", "timestamp": "2026-01-01T10:01:05.000Z",
         "message": {"id": "m3", "role": "assistant", "content": [{"type": "text", "text": "All set."}]}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines) + '{"type": "assist', encoding="utf-8")
    return path


def test_extract_follows_the_scripts_rules(tmp_path):
    raw = extract([json.loads(line) for line in _cc(tmp_path).read_text().splitlines()[:-1]])
    assert [t for _, t in raw.prompts] == ["ok, and REJECTED: the hand loop, we will use Retry"]  # list prompt missed
    assert [t for _, t in raw.tools] == ["Edit on /home/dev/x/http.py", "Grep on unknown"]
    assert [t for _, t in raw.assistant][-1] == "All set."
    assert "DECISION: use curl" in [t for _, t in raw.assistant]  # sidechain chatter is read too


def test_checkpoint_state(tmp_path):
    out = checkpoint(str(_cc(tmp_path)), now=NOW)
    v = views(out.text)
    assert v.get("workflow") == ["ok, and REJECTED: the hand loop, we will use Retry"]
    assert v.get("current") == ["All set."]
    assert v.get("done") == ["Edit on /home/dev/x/http.py", "Grep on unknown"]
    assert v.get("remaining") == []
    assert [(d.status, d.what) for d in v.decisions] == [
        ("APPROVED", "Going with urllib3 Retry because it backs off."),
        ("APPROVED", "DECISION: use curl"),
        ("REJECTED", "ok, and REJECTED: the hand loop, we will use Retry"),
    ]
    assert v.get("facts") == [FACTS_PLACEHOLDER]
    # evidence: the main-thread lines are in an event of our reader's transcript; the sidechain line is not
    grounded = [d.evidence is not None for d in out.state.decisions]
    assert grounded == [True, False, True]
    assert out.transcript is not None and out.state.kind == "auto"


def test_checkpoint_reads_opencode_export_and_copilot():
    export = checkpoint(str(ROOT / "fixtures/evals/opencode/approval.json"), now=NOW)
    assert views(export.text).get("workflow")[0].startswith("the /feed endpoint returns all 5000 items")
    assert "read on /home/dev/mobile-api/api/feed.py" in views(export.text).get("done")
    copilot = checkpoint(str(ROOT / "fixtures/evals/copilot/no-use-instead.jsonl"), now=NOW)
    assert "view on /home/dev/crawler/crawler/fetch.py" in views(copilot.text).get("done")  # object arguments
