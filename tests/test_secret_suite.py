"""The secret suite (issue 11, bar 1): every command that prints or writes, on one transcript that plants every
secret shape of issue 11 part 2 in every place a secret can sit; zero planted secrets in any output, zero kept
numbers lost.

The transcript is ``fixtures/secrets/secret-suite.jsonl`` (``fixtures/secrets/generate.py``; all values fake).
Commands run in-process through ``pipeline.entry.main`` (the hook fast lane and click alike): ``extract-raw``,
``checkpoint``, ``recover`` (dry run, refused, masked, llm engine), ``resume`` (recovering from the marker's
transcript, and from a hand-written state file holding secrets), ``restore``, ``merge`` (refused and masked),
``batch`` (report, JSON, cache).  The llm engine runs against the local stand-in (``tests/standin_server.py``,
127.0.0.1 only), which answers by echoing what it was sent — a model that parrots its input — so its request
bodies and what comes back both must be clean.  Then every file under the test's folder is read too.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from standin_server import StandIn, answer

from pipeline.entry import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "secrets" / "secret-suite.jsonl"
TRUTH = json.loads((ROOT / "fixtures" / "secrets" / "secret-suite.secrets.json").read_text(encoding="utf-8"))
SECRETS: list[str] = TRUTH["secrets"]
KEEP: list[str] = list(TRUTH["keep"])
#: Kept numbers of the first prompt: every output that shows the Approved Workflow shows them.
WORKFLOW_KEEP = [k for k in KEEP if k != "5432"]

MANUAL = """# Agent State

Session: 2026-09-14-0945 | Cwd: /home/dev/billing | Repo/Branch: billing@fix/staging-creds
Created: 2026-09-14T09:45:00Z

## Approved Workflow
Fix the staging login for ORD-4471 on port 6380 (API on 8443); the db password: {db} stays until #4821 lands.

## Position
- **Current:** Check `mysql -uroot -p{mysql} -h db.staging` again
- **Done:**
  - Ran `redis-cli -p 6380 -a {redis} ping`
- **Remaining:**
  - Rotate {aws_secret} (key id {aws_id}) before 2026-09-14T09:30:00Z + 1 day

## Decision Log
2026-09-14T09:32:33Z APPROVED: set the staging db password: {db} - the old one leaked, see 9f1c2ab3d4e5f60718293a4b5c6d7e8f90a1b2c3

## Established Facts
- The worker has 512 MiB; PGPASSWORD={pg} works for pg_dump

## Re-derivation
- Read: config/staging.yaml
"""


def manual_state() -> str:
    by_start = {s[:6]: s for s in SECRETS}
    return MANUAL.format(db=by_start["Tr0ub4"], mysql=by_start["S3cr3t"], redis=by_start["R3disA"],
                         aws_secret=by_start["Zr8FAK"], aws_id=by_start["AKIAQ7"], pg=by_start["PgEnvF"])


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


class Outputs:
    """Everything the commands printed, by label."""

    def __init__(self) -> None:
        self.printed: dict[str, str] = {}

    def add(self, label: str, text: str) -> None:
        self.printed[label] = self.printed.get(label, "") + text


def echo_step(body: dict):
    """The stand-in's answer to any stage: whatever was sent, given back (a parroting model)."""
    sent = "\n".join(m.get("content") or "" for m in body.get("messages", []) if isinstance(m.get("content"), str))
    tools = body.get("tools") or []
    name = tools[0]["function"]["name"] if tools else ""
    if "Woven" in name or "approved_workflow" in json.dumps(body.get("response_format") or {}):
        return answer({"approved_workflow": sent[-1500:], "position": {"current": sent[-300:], "done": [sent[:300]],
                                                                       "remaining": []}})
    return answer({"decisions": [], "facts": []})


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> tuple[Path, Outputs, list[dict]]:
    """Run every command once; the folder they wrote into, what they printed, the llm request bodies."""
    work = tmp_path_factory.mktemp("secret-suite")
    out = Outputs()
    mp = pytest.MonkeyPatch()
    mp.chdir(work)
    mp.setenv("XDG_CACHE_HOME", str(work / "xdg-cache"))
    for name in ("DUCK_TAPE_ENGINE", "DUCK_TAPE_MODEL", "DUCK_TAPE_API_BASE", "OPENAI_API_KEY"):
        mp.delenv(name, raising=False)
    archive = tmp_path_factory.mktemp("secret-suite-archive")
    shutil.copy(FIXTURE, archive / "846d9ff8-2035-43ab-a514-a74e1333ff34.jsonl")
    transcript = str(FIXTURE)
    codes: dict[str, int] = {}

    def run(label: str, *args: str, stdin: str = "") -> int:
        old_out, old_err, old_in = sys.stdout, sys.stderr, sys.stdin
        sys.stdout, sys.stderr, sys.stdin = io.StringIO(), io.StringIO(), io.StringIO(stdin)
        try:
            code = main(list(args))
        finally:
            printed = sys.stdout.getvalue() + "\n" + sys.stderr.getvalue()
            sys.stdout, sys.stderr, sys.stdin = old_out, old_err, old_in
        out.add(label, printed)
        codes[label] = code
        return code

    server = StandIn()
    server.script(*([echo_step] * 40))
    try:
        run("extract-raw", "extract-raw", transcript)
        run("checkpoint", "checkpoint", "--transcript", transcript, "--dir", ".duck-tape",
            stdin=json.dumps({"transcript_path": transcript, "cwd": str(work), "trigger": "auto"}))
        run("resume-dry-run", "resume", "--dry-run", "--context", "CONTEXT.md")
        run("resume-refused", "resume", "--yes", "--context", "CONTEXT.md")
        run("resume", "resume", "--yes", "--mask", "--context", "CONTEXT.md")
        run("restore", "restore", "--dir", ".duck-tape")
        run("restore-claude-code", "restore", "--dir", ".duck-tape", "--format", "claude-code")
        run("recover-dry-run", "recover", transcript, "--dry-run", "--dir", "store")
        run("recover-refused", "recover", transcript, "--yes", "--dir", "store")
        run("recover-mask-merge", "recover", transcript, "--yes", "--mask", "--dir", "store", "--merge",
            "--context", "CONTEXT.md")
        run("recover-llm", "recover", transcript, "--dry-run", "--dir", "store", "--engine", "llm", "--model",
            "openai/gpt-4o-mini", "--api-base", server.url)
        manual = work / "manual" / "2026-09-14-0945.state.md"
        manual.parent.mkdir()
        manual.write_text(manual_state(), encoding="utf-8")
        run("merge-refused", "merge", str(manual), "--yes", "--context", "CONTEXT.md")
        run("merge-mask", "merge", str(manual), "--yes", "--mask", "--context", "CONTEXT.md")
        shutil.copy(manual, work / ".duck-tape" / manual.name)  # a manual file newer than the auto: used as is
        run("resume-manual", "resume", "--dry-run", "--context", "CONTEXT.md", "--reconcile")
        run("restore-manual", "restore", "--dir", ".duck-tape")
        run("batch-refused", "batch", str(archive), "--out", "batch-plain", "--jobs", "1", "--engine", "rules")
        run("batch-mask", "batch", str(archive), "--out", "batch", "--jobs", "1", "--engine", "rules", "--mask")
        run("batch-rerun", "batch", str(archive), "--out", "batch", "--jobs", "1", "--engine", "rules", "--mask")
    finally:
        server.close()
        mp.undo()
    return work, out, server.requests, codes


def test_the_fixture_plants_every_secret_and_keeps_every_number():
    text = FIXTURE.read_text(encoding="utf-8")
    # as JSON string content: the PEM lines sit in an escaped service-account JSON, the rest verbatim
    assert [s for s in SECRETS if s not in text] == []
    assert [k for k in KEEP if k not in text] == []
    assert len(SECRETS) >= 30


def test_commands_ran_as_expected(suite):
    _, _, requests, codes = suite
    assert codes["extract-raw"] == 0 and codes["checkpoint"] == 0
    assert codes["resume-refused"] == 3 and codes["recover-refused"] == 3 and codes["merge-refused"] == 3
    assert codes["resume"] == 0 and codes["recover-mask-merge"] == 0 and codes["merge-mask"] == 0
    assert codes["recover-llm"] == 0 and codes["resume-manual"] == 0
    assert codes["batch-mask"] == 0 and codes["batch-rerun"] == 0
    assert len(requests) >= 2  # the llm engine really asked the stand-in


@pytest.mark.parametrize("label", [
    "extract-raw", "checkpoint", "resume-dry-run", "resume-refused", "resume", "restore", "restore-claude-code",
    "recover-dry-run", "recover-refused", "recover-mask-merge", "recover-llm", "merge-refused", "merge-mask",
    "resume-manual", "restore-manual", "batch-refused", "batch-mask", "batch-rerun",
])
def test_no_planted_secret_is_printed(suite, label):
    _, out, _, _ = suite
    assert leaks(out.printed[label]) == []


def test_no_planted_secret_in_any_file_written(suite):
    work, _, _, _ = suite
    planted = {work / "manual" / "2026-09-14-0945.state.md", work / ".duck-tape" / "2026-09-14-0945.state.md"}
    files = [p for p in work.rglob("*") if p.is_file() and p not in planted]
    assert len(files) > 10  # state files, marker, CONTEXT.md (+ backup), batch states, reports, caches
    found = {str(p.relative_to(work)): leaks(p.read_bytes().decode("utf-8", "replace")) for p in files}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_no_planted_secret_in_llm_request_bodies(suite):
    _, _, requests, _ = suite
    bodies = [json.dumps(r, ensure_ascii=False) for r in requests]
    assert [leaks(b) for b in bodies if leaks(b)] == []
    sent = "\n".join(m["content"] for r in requests for m in r["messages"] if isinstance(m.get("content"), str))
    assert [k for k in KEEP if k not in sent] == []  # every kept number reached the model


def test_kept_numbers_survive(suite):
    work, out, _, _ = suite
    assert [k for k in KEEP if k not in out.printed["extract-raw"]] == []
    states = [*work.joinpath(".duck-tape").glob("*-auto.state.md"), *work.joinpath("store").glob("*.state.md"),
              *work.joinpath("batch").glob("*.state.md")]
    assert len(states) >= 3
    for path in states:
        text = path.read_text(encoding="utf-8")
        assert [k for k in WORKFLOW_KEEP if k not in text] == [], path.name
    for label in ("recover-dry-run", "recover-llm", "restore", "restore-manual"):
        assert [k for k in WORKFLOW_KEEP if k not in out.printed[label]] == [], label
    context = (work / "CONTEXT.md").read_text(encoding="utf-8")
    assert [k for k in ("ORD-4471", "6380", "8443", "#4821") if k not in context] == []
    assert "6380" in out.printed["resume-manual"] and "512 MiB" in out.printed["restore-manual"]


def test_masked_outputs_say_what_they_masked(suite):
    work, out, _, _ = suite
    assert "Flagged: password-assignment" in out.printed["recover-refused"]
    assert "Flagged: datadog-key" in out.printed["recover-refused"]
    assert "masked" in out.printed["checkpoint"]
    [auto] = work.joinpath(".duck-tape").glob("*-auto.state.md")
    assert "password: <REDACTED>" in auto.read_text(encoding="utf-8")
