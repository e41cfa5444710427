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
WORKFLOW_KEEP = [k for k in KEEP if k not in ("5432", "3306:3306", "up -d postgres")]

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
    """Everything the commands printed, by label; ``stdout`` holds stdout alone (the ``--json`` runs parse it)."""

    def __init__(self) -> None:
        self.printed: dict[str, str] = {}
        self.stdout: dict[str, str] = {}

    def add(self, label: str, text: str, stdout: str = "") -> None:
        self.printed[label] = self.printed.get(label, "") + text
        self.stdout[label] = self.stdout.get(label, "") + stdout


def freeform_context() -> str:
    """A CONTEXT.md written by hand before the schema (``migrate`` input), with planted secrets in its prose and a
    Notes block whose first line holds one (``prune --list``)."""
    by_start = {s[:6]: s for s in SECRETS}
    return ("# Project Context: billing\n\n"
            f"We decided to keep the staging db password: {by_start['Tr0ub4']} until #4821 lands.\n\n"
            f"Always export PGPASSWORD={by_start['PgEnvF']} before pg_dump on port 5432.\n\n"
            "## Notes\n\n### 2026-09-14 09:45\n"
            f"redis-cli -p 6380 -a {by_start['R3disA']} ping answered PONG\n")


#: The ``--json`` runs of the suite (issue 15 item 5): stdout is one JSON object; no string in it holds a secret.
JSON_LABELS = ("resume-json-refused", "resume-json", "resume-json-manual", "restore-json", "restore-json-manual",
               "recover-json-refused", "recover-json-merge", "merge-json-refused", "merge-json-mask",
               "migrate-json", "migrate-json-refused", "prune-json", "status-json")


def echo_step(body: dict):
    """The stand-in's answer to any stage: whatever was sent, given back (a parroting model)."""
    sent = "\n".join(m.get("content") or "" for m in body.get("messages", []) if isinstance(m.get("content"), str))
    tools = body.get("tools") or []
    name = tools[0]["function"]["name"] if tools else ""
    if "Woven" in name or "approved_workflow" in json.dumps(body.get("response_format") or {}):
        return answer({"approved_workflow": sent[-3000:], "position": {"current": sent[-300:], "done": [sent[:300]],
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
            stdout = sys.stdout.getvalue()
            printed = stdout + "\n" + sys.stderr.getvalue()
            sys.stdout, sys.stderr, sys.stdin = old_out, old_err, old_in
        out.add(label, printed, stdout)
        codes[label] = code
        return code

    server = StandIn()
    server.script(*([echo_step] * 40))
    try:
        run("extract-raw", "extract-raw", transcript)
        run("checkpoint", "checkpoint", "--transcript", transcript, "--dir", ".duck-tape",
            stdin=json.dumps({"transcript_path": transcript, "cwd": str(work), "trigger": "auto"}))
        run("resume-dry-run", "resume", "--dry-run", "--context", "CONTEXT.md")
        run("resume-json-refused", "resume", "--json", "--yes", "--context", "CONTEXT.md")
        run("resume-json", "resume", "--json", "--dry-run", "--context", "CONTEXT.md", "--reconcile")
        run("resume-refused", "resume", "--yes", "--context", "CONTEXT.md")
        run("resume", "resume", "--yes", "--mask", "--context", "CONTEXT.md")
        run("restore", "restore", "--dir", ".duck-tape")
        run("restore-claude-code", "restore", "--dir", ".duck-tape", "--format", "claude-code")
        run("restore-json", "restore", "--dir", ".duck-tape", "--json")
        run("recover-json-refused", "recover", transcript, "--json", "--yes", "--dir", "store-json")
        run("recover-json-merge", "recover", transcript, "--json", "--yes", "--mask", "--dir", "store-json",
            "--merge", "--context", "CONTEXT-json.md")
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
        run("merge-json-refused", "merge", str(manual), "--json", "--yes", "--context", "CONTEXT-json.md")
        run("merge-json-mask", "merge", str(manual), "--json", "--yes", "--mask", "--context", "CONTEXT-json.md")
        (work / "FREEFORM.md").write_text(freeform_context(), encoding="utf-8")
        run("migrate-json", "migrate", "--json", "--dry-run", "--context", "FREEFORM.md")
        run("migrate-json-refused", "migrate", "--json", "--yes", "--context", "FREEFORM.md")
        run("prune-json", "prune", "--list", "--json", "--context", "FREEFORM.md")
        shutil.copy(manual, work / ".duck-tape" / manual.name)  # a manual file newer than the auto: used as is
        run("resume-manual", "resume", "--dry-run", "--context", "CONTEXT.md", "--reconcile")
        run("resume-json-manual", "resume", "--json", "--dry-run", "--context", "CONTEXT.md", "--reconcile")
        run("restore-manual", "restore", "--dir", ".duck-tape")
        run("restore-json-manual", "restore", "--dir", ".duck-tape", "--json")
        run("status-json", "status", "--json")
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
    "resume-manual", "restore-manual", "batch-refused", "batch-mask", "batch-rerun", *JSON_LABELS,
])
def test_no_planted_secret_is_printed(suite, label):
    _, out, _, _ = suite
    assert leaks(out.printed[label]) == []


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize("label", JSON_LABELS)
def test_json_outputs_are_one_clean_object(suite, label):
    """Every ``--json`` run prints one JSON object, success or error, and no decoded string of it (where an escape
    could hide a secret from a plain search of the text) holds a planted secret."""
    _, out, _, _ = suite
    report = json.loads(out.stdout[label])
    assert isinstance(report, dict) and report["command"] == label.split("-")[0]
    assert [s for s in _strings(report) if leaks(s)] == []


def test_json_runs_did_what_they_should(suite):
    _, out, _, codes = suite
    objects = {label: json.loads(out.stdout[label]) for label in JSON_LABELS}
    for label in ("resume-json-refused", "recover-json-refused", "merge-json-refused", "migrate-json",
                  "migrate-json-refused"):
        assert codes[label] == 3 and objects[label]["exit_code"] == 3, label
        assert any(line.startswith("Redaction: detected") for line in objects[label]["redaction"]), label
    assert codes["recover-json-merge"] == 0 and objects["recover-json-merge"]["merge"]["written"] is True
    assert codes["merge-json-mask"] == 0 and objects["merge-json-mask"]["redacted"]
    assert objects["resume-json"]["recovered"]["redaction"]  # the preview masked what it found
    manual = objects["resume-json-manual"]  # the manual file is of no session: the recovered one is used (issue 14)
    assert manual["state"].endswith("-recovered.state.md") and manual["position"]["current"] == (
        "yes, go ahead and open the PR for ORD-4471 — Open the PR")
    assert isinstance(manual["reconciliation"], list) and manual["decisions"]
    for label in ("restore-json", "restore-json-manual"):
        assert objects[label]["restored"] is True and [k for k in WORKFLOW_KEEP
                                                       if k not in objects[label]["handoff"]] == []
    # migrate refuses a text with secrets even on a dry run (as the text mode does): the error object, exit 3
    assert codes["migrate-json"] == 3 and len(objects["migrate-json"]["redaction"]) == 6
    assert objects["prune-json"]["notes"][0]["first"].startswith("redis-cli -p 6380 -a <REDACTED> ping")


def test_no_planted_secret_in_any_file_written(suite):
    work, _, _, _ = suite
    planted = {work / "manual" / "2026-09-14-0945.state.md", work / ".duck-tape" / "2026-09-14-0945.state.md",
               work / "FREEFORM.md"}
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
    # the first prompt is the Approved Workflow, a task list CONTEXT.md does not take (DESIGN.md "Translation",
    # revised 2026-12-04); the kept timestamp of the Remaining item it does take survives the masking
    assert "before 2026-09-14T09:30:00Z + 1 day [status: open]" in context and leaks(context) == []
    # resume shows CONTEXT.md's decisions, masked; the prompt's numbers are no longer among them (the workflow is
    # not translated since the 2026-12-04 revision of DESIGN.md "Translation"), the state files keep them (above)
    assert "**set-staging-db-password**: APPROVED: set the staging db password: <REDACTED>" in out.printed["resume-manual"]
    assert leaks(out.printed["resume-manual"]) == [] and "512 MiB" in out.printed["restore-manual"]


def test_masked_outputs_say_what_they_masked(suite):
    work, out, _, _ = suite
    assert "Flagged: password-assignment" in out.printed["recover-refused"]
    assert "Flagged: datadog-key" in out.printed["recover-refused"]
    assert "masked" in out.printed["checkpoint"]
    [auto] = work.joinpath(".duck-tape").glob("*-auto.state.md")
    assert "password: <REDACTED>" in auto.read_text(encoding="utf-8")
