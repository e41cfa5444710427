"""``duck-tape init``: hook configuration per harness, merged into existing files, idempotent, backed up,
diff shown before writing (issue 6, item 3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.hooks.install import claude_command, merge_claude, plan_install
from pipeline.hooks.opencode_plugin import plugin_source

EXISTING = {
    "permissions": {"allow": ["Bash(pytest:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}],
        "PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": "./scripts/backup.sh"}]}],
    },
}
OUR_COMMAND = 'duck-tape checkpoint --dir "${CLAUDE_PROJECT_DIR:-.}/.duck-tape"'


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def backups(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".bak"))


@pytest.fixture
def project(tmp_path):
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING, indent=4) + "\n")
    return tmp_path


def test_claude_merge_keeps_every_existing_hook_and_backs_up(capsys, project):
    settings = project / ".claude" / "settings.local.json"
    original = settings.read_bytes()
    code, out, _ = run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--write")
    assert code == 0
    data = json.loads(settings.read_text())
    assert data["permissions"] == EXISTING["permissions"]
    assert data["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    assert data["hooks"]["PreCompact"] == [
        EXISTING["hooks"]["PreCompact"][0],
        {"matcher": "", "hooks": [{"type": "command", "command": OUR_COMMAND, "timeout": 30}]},
    ]
    [backup] = backups(settings.parent)
    assert (settings.parent / backup).read_bytes() == original
    assert f"--- {settings}\n+++ {settings}\n" in out  # the diff is shown
    assert f'+            "command": {json.dumps(OUR_COMMAND)},' in out
    assert out.index("+++") < out.index(f"Wrote {settings}")


def test_claude_init_is_idempotent(capsys, project):
    settings = project / ".claude" / "settings.local.json"
    assert run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--write")[0] == 0
    after_first = settings.read_bytes()
    code, out, _ = run(capsys, "init", "--harness", "claude-code", "--root", str(project), "--write")
    assert code == 0 and "already installed; nothing to do" in out and "+++" not in out
    assert settings.read_bytes() == after_first
    assert len(backups(settings.parent)) == 1


def test_claude_without_write_changes_nothing_and_prints_a_valid_snippet(capsys, tmp_path):
    code, out, _ = run(capsys, "init", "--harness", "claude-code", "--root", str(tmp_path), "--no-restore")
    assert code == 0 and "Not written (dry run)" in out
    assert not (tmp_path / ".claude").exists()
    snippet = out.split("\n", 1)[1].split("\n--- ", 1)[0]
    assert json.loads(snippet) == {"hooks": {"PreCompact": [
        {"matcher": "", "hooks": [{"type": "command", "command": OUR_COMMAND, "timeout": 30}]}]}}
    assert out.startswith(f"# claude-code: {tmp_path / '.claude' / 'settings.local.json'}\n")


def test_claude_project_writes_settings_json(capsys, tmp_path):
    code, _, _ = run(capsys, "init", "--harness", "claude-code", "--root", str(tmp_path), "--project", "--write")
    assert code == 0
    assert json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]["PreCompact"][0]["hooks"][0]["command"] == OUR_COMMAND
    assert not (tmp_path / ".claude" / "settings.local.json").exists()


def test_an_older_duck_tape_hook_is_updated_in_place(tmp_path):
    path = tmp_path / "settings.json"
    old = {"hooks": {"PreCompact": [{"matcher": "manual|auto", "hooks": [
        {"type": "command", "command": "echo before"},
        {"type": "command", "command": "/opt/bin/duck-tape checkpoint"},
    ]}]}}
    new = json.loads(merge_claude(path, json.dumps(old)))
    assert new["hooks"]["PreCompact"] == [{"matcher": "manual|auto", "hooks": [
        {"type": "command", "command": "echo before"},
        {"type": "command", "command": OUR_COMMAND, "timeout": 30},
    ]}]


@pytest.mark.parametrize("text, line", [("{\n  \"hooks\": {\n    \"PreCompact\": [\n}\n", 4), ("[1, 2]\n", None)])
def test_bad_settings_file_is_refused_naming_file_and_line(capsys, tmp_path, text, line):
    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(text)
    code, _, err = run(capsys, "init", "--harness", "claude-code", "--root", str(tmp_path), "--write")
    assert code == 2
    assert (f"{settings}:{line}:" if line else f"{settings}:") in err
    assert settings.read_text() == text and backups(settings.parent) == []


def test_wrong_type_of_hooks_table_is_refused(tmp_path):
    from pipeline.errors import InputError

    with pytest.raises(InputError, match="expected hooks.'PreCompact' to be a JSON array"):
        merge_claude(tmp_path / "s.json", json.dumps({"hooks": {"PreCompact": {"matcher": ""}}}))


@pytest.mark.parametrize("env, expected", [({"CLAUDE_PROJECT_DIR": "/work/my project"}, "/work/my project/.duck-tape"),
                                           ({}, "./.duck-tape")])
def test_claude_command_pins_the_store_to_the_project_root(env, expected):
    command = claude_command("printf '%s|%s|%s\\n'")
    clean = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    proc = subprocess.run(["sh", "-c", command], env={**clean, **env}, capture_output=True, text=True, check=True)
    assert proc.stdout == f"checkpoint|--dir|{expected}\n"


def test_copilot_hook_file(capsys, tmp_path):
    code, out, _ = run(capsys, "init", "--harness", "copilot", "--root", str(tmp_path), "--write")
    assert code == 0
    path = tmp_path / ".github" / "hooks" / "duck-tape.json"
    assert json.loads(path.read_text()) == {"version": 1, "hooks": {"preCompact": [
        {"type": "command", "bash": "duck-tape checkpoint", "powershell": "duck-tape checkpoint", "cwd": ".",
         "timeoutSec": 30}]}}
    assert "--- /dev/null" in out
    code, out, _ = run(capsys, "init", "--harness", "copilot", "--root", str(tmp_path), "--write")
    assert code == 0 and "already installed" in out


def test_copilot_file_with_other_hooks_keeps_them(tmp_path):
    path = tmp_path / ".github" / "hooks" / "duck-tape.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "hooks": {"sessionEnd": [{"type": "command", "bash": "./log.sh"}]}}))
    plan = plan_install("copilot", tmp_path)
    data = json.loads(plan.new_text)
    assert data["hooks"]["sessionEnd"] == [{"type": "command", "bash": "./log.sh"}]
    assert data["hooks"]["preCompact"][0]["bash"] == "duck-tape checkpoint"


def test_opencode_plugin_file(capsys, tmp_path):
    code, _, _ = run(capsys, "init", "--harness", "opencode", "--root", str(tmp_path), "--write",
                     "--command", "'/opt/duck tape/bin/duck-tape'")  # shell words, as in the other hook files
    assert code == 0
    text = (tmp_path / ".opencode" / "plugins" / "duck-tape.js").read_text()
    assert text == plugin_source("'/opt/duck tape/bin/duck-tape'")
    assert 'const DUCK_TAPE = ["/opt/duck tape/bin/duck-tape"]' in text
    assert '"experimental.session.compacting": async (input, output) =>' in text
    assert "client.session.messages({ path: { id: input.sessionID } })" in text
    assert 'duckTape(["checkpoint", "--dir", store], payload, directory)' in text
    # issue 22: the restore gets the same payload as the checkpoint, so it hands over this session's state only
    assert 'duckTape(["restore", "--dir", store, "--budget", String(HANDOFF_BYTES)], payload, directory)' in text
    assert "output.context.push(handoff.stdout)" in text and "const HANDOFF_BYTES = 4000" in text


def test_plugin_payload_is_what_the_checkpoint_reads():
    from pipeline.hooks.payload import parse_payload

    # the object the plugin pipes in (see pipeline/hooks/opencode_plugin.js), as JSON.stringify writes it
    payload = json.dumps({"harness": "opencode", "sessionID": "ses_1", "snapshotPath": "/p/.duck-tape/opencode/ses_1.json",
                          "cwd": "/p"}, separators=(",", ":"))
    got = parse_payload(payload)
    assert (got.harness, got.session_id, got.transcript_path, got.cwd) == (
        "opencode", "ses_1", "/p/.duck-tape/opencode/ses_1.json", "/p")
    assert 'JSON.stringify({ harness: "opencode", sessionID: input.sessionID, snapshotPath, cwd: directory })' in plugin_source()


DRIVER = """
import { readFileSync } from "node:fs"
const [plugin, messagesPath, directory] = process.argv.slice(2)
const { DuckTapeCheckpoint } = await import(plugin)
const messages = JSON.parse(readFileSync(messagesPath, "utf8"))
const client = { session: { messages: async ({ path }) => ({ data: path.id === "ses_test1" ? messages : [] }) } }
const hooks = await DuckTapeCheckpoint({ client, directory })
const output = { context: [] }
await hooks["experimental.session.compacting"]({ sessionID: "ses_test1" }, output)
console.log(JSON.stringify(output))
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run the opencode plugin")
def test_opencode_plugin_checkpoints_and_gives_the_compaction_the_handoff(tmp_path):
    """The installed plugin run as opencode runs it (its compacting hook with {sessionID} and an output whose
    context the summary prompt gets), with duck-tape on PATH: snapshot, checkpoint, and the handoff pushed."""
    from hook_runner import shim

    from pipeline.state.marker import read_marker

    root = Path(__file__).resolve().parent.parent
    messages = root / "fixtures" / "opencode" / "messages.json"
    project = tmp_path / "project"
    project.mkdir()
    assert main(["init", "--harness", "opencode", "--root", str(project), "--write"]) == 0
    plugin = project / ".opencode" / "plugins" / "duck-tape.js"
    module = tmp_path / "duck-tape.mjs"  # node needs the .mjs name for an ES module outside a package
    module.write_text(plugin.read_text())
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    env = {"HOME": str(tmp_path), "PATH": f"{shim(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["node", str(driver), module.as_uri(), str(messages), str(project)], capture_output=True,
                          text=True, timeout=120, env=env, cwd=project)
    assert proc.returncode == 0, proc.stderr
    store = project / ".duck-tape"
    snapshot = store / "opencode" / "ses_test1.json"
    assert json.loads(snapshot.read_text()) == json.loads(messages.read_text())
    assert read_marker(store).transcript == str(snapshot)
    [handoff] = json.loads(proc.stdout)["context"]
    assert handoff.startswith("# duck-tape: session state restored after compaction")
    assert len(handoff.encode()) <= 4000 and ("## Remaining" in handoff or "## Current" in handoff)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run the opencode plugin")
def test_opencode_plugin_never_fails_the_compaction_when_duck_tape_is_missing(tmp_path):
    root = Path(__file__).resolve().parent.parent
    module = tmp_path / "duck-tape.mjs"
    module.write_text(plugin_source("/nonexistent/duck-tape"))
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    project = tmp_path / "project"
    project.mkdir()
    proc = subprocess.run(["node", str(driver), module.as_uri(), str(root / "fixtures" / "opencode" / "messages.json"),
                           str(project)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"context": []}
    assert "duck-tape: checkpoint:" in proc.stderr


#: opencode 2.x as its plugin host runs the plugin: the default export's setup(ctx) registers session hooks, and the
#: "compaction" hook gets the compaction request ({sessionID, messages in the @opencode/ai shape, system parts}).
DRIVER_V2 = """
import { readFileSync } from "node:fs"
const [plugin, requestPath, directory] = process.argv.slice(2)
const { default: definition } = await import(plugin)
const hooks = {}
const ctx = { location: { directory }, session: { hook: async (name, fn) => { hooks[name] = fn } } }
await definition.setup(ctx)
const event = { ...JSON.parse(readFileSync(requestPath, "utf8")), system: [{ type: "text", text: "You summarise." }] }
await hooks.compaction(event)
console.log(JSON.stringify({ id: definition.id, hooks: Object.keys(hooks), system: event.system }))
"""

#: A compaction request of opencode 2.x (made up for this test; shapes from packages/ai/src/schema/messages.ts).
REQUEST_V2 = {
    "sessionID": "ses_v2test", "kind": "compaction", "agent": "build",
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Add rate limiting to the checkout endpoint. "
                                                            "Use a token bucket per API key, not a fixed window."}]},
        {"role": "assistant", "content": [
            {"type": "reasoning", "text": "Look at the handler first."},
            {"type": "text", "text": "I'll read the checkout handler first."},
            {"type": "tool-call", "id": "call_1", "name": "read", "input": {"filePath": "src/checkout/handler.py"}}]},
        {"role": "tool", "content": [{"type": "tool-result", "id": "call_1", "name": "read",
                                      "result": {"type": "text", "value": "def checkout(request):\n    ..."}}]},
        {"role": "assistant", "content": [
            {"type": "tool-call", "id": "call_2", "name": "bash", "input": {"command": "pytest tests/test_checkout.py"}}]},
        {"role": "tool", "content": [{"type": "tool-result", "id": "call_2", "name": "bash",
                                      "result": {"type": "error", "value": "1 failed: test_limit_returns_429"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Next I will add the limiter middleware."}]},
    ],
}


def test_opencode_plugin_api_follows_the_installed_opencode(monkeypatch):
    from pipeline.hooks.opencode_plugin import installed_api

    class Proc:
        def __init__(self, out):
            self.stdout = out

    monkeypatch.delenv("DUCK_TAPE_OPENCODE_API", raising=False)
    assert installed_api(lambda *a, **k: Proc("2.0.11\n")) == "v2"
    assert installed_api(lambda *a, **k: Proc("opencode 1.18.32\n")) == "v1"

    def absent(*a, **k):
        raise FileNotFoundError("opencode")

    assert installed_api(absent) == "v1"
    monkeypatch.setenv("DUCK_TAPE_OPENCODE_API", "v2")
    assert installed_api(absent) == "v2"
    with pytest.raises(ValueError, match="unknown opencode plugin API"):
        plugin_source(api="v3")


def test_init_writes_the_v2_plugin_for_opencode_2(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DUCK_TAPE_OPENCODE_API", "v2")
    code, _, _ = run(capsys, "init", "--harness", "opencode", "--root", str(tmp_path), "--write")
    assert code == 0
    text = (tmp_path / ".opencode" / "plugins" / "duck-tape.js").read_text()
    assert text == plugin_source(api="v2")
    assert 'await ctx.session.hook("compaction", async (event) =>' in text and "export default {" in text
    assert "experimental.session.compacting" not in text


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to run the opencode plugin")
def test_opencode_v2_plugin_checkpoints_and_gives_the_compaction_request_the_handoff(tmp_path):
    """The 2.x plugin run as a 2.x host runs it: setup(ctx), then the compaction hook with the request.  The
    request's messages become a {role, content} snapshot the checkpoint distils; the handoff becomes a system part."""
    from hook_runner import shim

    from pipeline.state.marker import read_marker
    from pipeline.state.parse import parse
    from pipeline.state.store import list_states

    project = tmp_path / "project"
    project.mkdir()
    module = tmp_path / "duck-tape.mjs"
    module.write_text(plugin_source(api="v2"))
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER_V2)
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST_V2))
    env = {"HOME": str(tmp_path), "PATH": f"{shim(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["node", str(driver), module.as_uri(), str(request), str(project)], capture_output=True,
                          text=True, timeout=120, env=env, cwd=tmp_path)  # not the project: the plugin uses ctx's
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["id"], out["hooks"]) == ("duck-tape", ["compaction"])
    store = project / ".duck-tape"
    snapshot = store / "opencode" / "ses_v2test.jsonl"
    lines = [json.loads(line) for line in snapshot.read_text().splitlines()]
    assert [line["role"] for line in lines] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert lines[1]["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
        "name": "read", "arguments": json.dumps({"filePath": "src/checkout/handler.py"}, separators=(",", ":"))}}]
    assert lines[4] == {"role": "tool", "tool_call_id": "call_2", "name": "bash",
                        "content": "Error: 1 failed: test_limit_returns_429"}
    assert read_marker(store).transcript == str(snapshot)
    [auto] = list_states(store)
    state = parse(auto.path.read_text())
    assert auto.kind == "auto" and "token bucket" in (state.approved_workflow or "")
    first, handoff = out["system"]
    assert first == {"type": "text", "text": "You summarise."} and handoff["type"] == "text"
    assert handoff["text"].startswith("# duck-tape: session state restored after compaction")
    assert len(handoff["text"].encode()) <= 4000
