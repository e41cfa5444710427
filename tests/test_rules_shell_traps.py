"""Session shapes the Gemini CLI corpus session showed the rules engine missing (real-session suite), each as a
general rule tested on shapes and words of its own: a ``cd`` that does not carry over, a repository created
outside the intended folder, a branch other than the one a push names, a command sequence the user handed over,
an edit that deletes (named in Done) or drops imports still used, a side question before the work."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from pipeline.stages import distil
from pipeline.stages.rules import edits, sequence, shellenv, workflow
from pipeline.stages.rules.scan import scan
from pipeline.transcripts import read_transcript
from rules_builder import B, evidence_ok


def _shell(b: B, tool: str, command: str, output: str, *, error: bool = False) -> None:
    b.call(tool, command, f"command: {command}\ndescription: run it")
    b.result(output, error=error)


def _distil(b: B):
    t = b.build()
    d = distil.run(t)
    assert evidence_ok(t, d.facts) == []
    return d


def _facts(b: B) -> list[str]:
    return [f.text for f in _distil(b).facts]


# --- cd does not carry over ----------------------------------------------------------------------------------


def test_cd_then_a_listing_of_the_start_directory_gemini_shape():
    b = B(cwd="/home/ana")
    b.user("Open the blog folder and list what is there.")
    _shell(b, "run_shell_command", "cd blog", "Output: (empty)\nProcess Group PGID: 4101")
    b.call("list_directory", ".", "dir_path: .")
    b.result("Directory listing for /home/ana:\n[DIR] blog\n.bashrc (3553 bytes)")
    b.asst("Here is the folder content.")
    facts = _facts(b)
    got = [f for f in facts if "does not carry over" in f]
    assert got and "`cd blog`" in got[0] and "/home/ana" in got[0] and "Directory listing for /home/ana" in got[0]


def test_cd_then_failure_then_chained_retry_works_codex_shape():
    b = B(cwd=None)
    b.user("Mostre o status do repositório em services/api.")
    _shell(b, "exec_command", "cd services/api", "")
    _shell(b, "exec_command", "git status", "fatal: not a git repository (or any of the parent directories): .git\n"
           "Exit code: 128", error=True)
    _shell(b, "exec_command", "cd services/api && git status", "On branch main\nnothing to commit, working tree clean")
    b.asst("O repositório está limpo.")
    got = [f for f in _facts(b) if "does not carry over" in f]
    assert got and "`git status`" in got[0] and "cd services/api && git status" in got[0]


def test_cd_then_pwd_prints_the_start_directory_but_not_when_it_moved():
    trapped = B(cwd="/srv/app")
    trapped.user("go to the web dir and check where we are")
    _shell(trapped, "Bash", "cd web", "")
    _shell(trapped, "Bash", "pwd", "/srv/app")
    trapped.asst("Done.")
    assert any("does not carry over" in f and "/srv/app" in f for f in _facts(trapped))
    moved = B(cwd="/srv/app")  # Claude Code's Bash keeps the directory: no trap
    moved.user("go to the web dir and check where we are")
    _shell(moved, "Bash", "cd web", "")
    _shell(moved, "Bash", "pwd", "/srv/app/web")
    moved.asst("Done.")
    assert not any("does not carry over" in f for f in _facts(moved))


# --- repository outside the intended folder ------------------------------------------------------------------


@pytest.mark.parametrize("cwd, cd, init_out, wants", [
    ("/Users/ana", "cd /Users/ana/site", "Initialized empty Git repository in /Users/ana/.git/",
     ["/Users/ana/.git", "home directory", "not in /Users/ana/site"]),
    ("/work", "cd tools", "Reinitialized existing Git repository in /work/.git/", ["/work/.git", "not in /work/tools"]),
    (None, "cd C:/code/app", "Initialized empty Git repository in C:/Users/li/.git/", ["C:/Users/li/.git", "home"]),
])
def test_git_init_outside_the_folder_the_cd_named(cwd, cd, init_out, wants):
    b = B(cwd=cwd)
    b.user("Inicializa o git no projeto e adiciona o remote.")
    _shell(b, "run_shell_command", cd, "Output: (empty)")
    _shell(b, "run_shell_command", "git init", "Output: " + init_out)
    b.asst("Repository initialized.")
    got = [f for f in _facts(b) if "created the repository at" in f]
    assert got, _facts(b)
    for w in wants:
        assert w in got[0]


def test_git_init_where_intended_is_no_fact():
    b = B(cwd="/home/ana")
    b.user("init git in site")
    _shell(b, "Bash", "cd site && git init", "Initialized empty Git repository in /home/ana/site/.git/")
    b.asst("Done.")
    assert not any("created the repository at" in f for f in _facts(b))


# --- branch mismatch -------------------------------------------------------------------------------------------


def test_initial_branch_against_a_push_in_the_users_commands():
    b = B(cwd="/home/ana/site")
    b.user("git init\ngit add .\ngit commit -m 'first'\ngit push -u origin main")
    _shell(b, "run_shell_command", "git init", "Output: hint: Using 'master' as the name for the initial branch.\n"
           "Initialized empty Git repository in /home/ana/site/.git/")
    b.asst("Initialized. Now staging.")
    got = [f for f in _facts(b) if "branch 'master'" in f]
    assert got and "'main'" in got[0] and "git branch -m main" in got[0]


def test_on_branch_against_a_later_push_by_the_agent_and_rename_clears_it():
    b = B(cwd="/repo")
    b.user("envie as mudanças")
    _shell(b, "Bash", "git status", "On branch develop\nnothing to commit")
    _shell(b, "Bash", "git push origin release", "error: src refspec release does not match any", error=True)
    b.asst("O push falhou.")
    assert any("branch 'develop'" in f and "'release'" in f for f in _facts(b))
    ok = B(cwd="/repo")
    ok.user("envie as mudanças")
    _shell(ok, "Bash", "git status", "On branch develop\nnothing to commit")
    _shell(ok, "Bash", "git branch -m release", "")
    _shell(ok, "Bash", "git push origin release", "To github.com:x/y.git\n * [new branch]      release -> release")
    ok.asst("Pronto.")
    assert not any("branch 'develop'" in f for f in _facts(ok))


def test_switched_branch_against_push_named_in_a_chinese_prompt():
    b = B(cwd="/repo")
    b.user("切换到新分支，然后执行 git push -u origin main 推送")
    _shell(b, "Bash", "git checkout -b feature/login", "Switched to a new branch 'feature/login'")
    b.asst("已切换。")
    assert any("branch 'feature/login'" in f and "'main'" in f for f in _facts(b))


# --- a command sequence the user handed over -------------------------------------------------------------------


def test_pasted_command_lines_current_and_remaining_gemini_shape():
    b = B(cwd="/home/ana")
    b.user("cd /home/ana/site\nnpm ci\nnpm run build\nnpx wrangler deploy")
    _shell(b, "run_shell_command", "cd /home/ana/site", "Output: (empty)")
    _shell(b, "run_shell_command", "npm ci", "added 210 packages")
    b.asst("Dependencies installed. Next, I will build the site.")
    d = _distil(b)
    assert "npm run build" in d.position.current and "4 commands" in d.position.current
    assert any("npx wrangler deploy" in r for r in d.position.remaining)


def test_fenced_block_with_portuguese_preface():
    b = B()
    b.user("Rode estes comandos na ordem, por favor:\n```bash\ngit add -A\ngit commit -m \"docs: guia\"\n"
           "git push origin main\n```\nDepois me avise.")
    _shell(b, "Bash", "git add -A", "")
    b.asst("Arquivos adicionados.")
    d = _distil(b)
    assert 'git commit -m "docs: guia"' in d.position.current
    assert any("git push origin main" in r for r in d.position.remaining)


def test_prompt_marks_and_code_that_is_not_a_script():
    lines = sequence.command_lines("Try:\n$ docker compose up -d\n$ curl localhost:8080/health\nthanks")
    assert lines == ["docker compose up -d", "curl localhost:8080/health"]
    code = "Fix this:\n```python\nimport os\nprint(os.getcwd())\n```"
    assert sequence.command_lines(code) == []
    b = B()
    b.user("$ make setup\n$ make test")
    b.asst("I'll look at the Makefile first.")  # nothing of the sequence ran: no progress yet
    assert sequence.progress(scan(b.build())) is None


# --- edits: deletions named in Done, dropped imports still used ------------------------------------------------


def _edit(b: B, tool: str, path: str, old: str, new: str, output: str, keys=("old_string", "new_string")) -> None:
    b.call(tool, path, f"file_path: {path}\n{keys[0]}: {old}\n{keys[1]}: {new}")
    b.result(output)


@pytest.mark.parametrize("tool, keys", [
    ("replace", ("old_string", "new_string")),
    ("Edit", ("old_string", "new_string")),
    ("str_replace_editor", ("old_str", "new_str")),
])
def test_a_pure_deletion_is_named_in_done(tool, keys):
    b = B()
    b.user("Drop the legacy flag from the config type.")
    _edit(b, tool, "src/config.ts", "  legacyMode?: boolean;\n", "", "The file src/config.ts has been updated.", keys)
    b.asst("Removed it.")
    d = _distil(b)
    assert any("src/config.ts" in x and "removed `legacyMode?: boolean;`" in x for x in d.position.done), d.position.done


def test_a_replacement_keeps_the_plain_done_line():
    b = B()
    b.user("rename the port")
    _edit(b, "Edit", "app.py", "PORT = 80", "PORT = 8080", "The file app.py has been updated.")
    b.asst("Done.")
    assert "Edited app.py" in _distil(b).position.done


def test_typescript_import_removed_whole_while_a_name_is_still_used():
    b = B(cwd="/home/ana/app")
    b.user("Remova o import de LegacyUser de '../models'.")
    old = "import { User, LegacyUser } from '../models';"
    _edit(b, "replace", "src/users.ts", old, "",
          "Successfully modified file: /home/ana/app/src/users.ts (1 replacements). Here is the updated code:\n\n"
          "export function load(): User[] {\n  return [];\n}\n")
    b.asst("Removi o import de LegacyUser.")
    got = [f for f in _facts(b) if "still used" in f]
    assert got and "User" in got[0] and "LegacyUser" not in got[0].split("but")[1] and "'../models'" in got[0]


def test_python_from_import_with_the_file_from_an_earlier_read():
    b = B()
    b.user("remove the unused json import")
    content = "import json, os\n\n\ndef here():\n    return os.getcwd()\n"
    b.read("tool.py", content)
    _edit(b, "Edit", "tool.py", "import json, os\n", "", "The file tool.py has been updated.")
    b.asst("Removed the json import.")
    got = [f for f in _facts(b) if "still used" in f]
    assert got and "os" in got[0] and "tool.py" in got[0]


def test_rust_use_narrowed_but_build_passed_after_is_no_fact():
    b = B()
    b.user("clean up the imports in main.rs")
    src = "use std::collections::{HashMap, HashSet};\n\nfn main() { let s: HashSet<u8> = HashSet::new(); }\n"
    b.read("src/main.rs", src)
    _edit(b, "Edit", "src/main.rs", "use std::collections::{HashMap, HashSet};",
          "use std::collections::HashMap;", "The file src/main.rs has been updated.")
    t = b.build()
    assert any("HashSet" in x.text for x in edits.dropped_imports(scan(t)))
    _shell(b, "Bash", "cargo build", "   Compiling demo v0.1.0\n    Finished dev [unoptimized] target(s) in 0.9s")
    b.asst("Builds.")
    assert not any("still used" in f for f in _facts(b))


# --- a side question before the work ---------------------------------------------------------------------------


@pytest.mark.parametrize("question", [
    "whats my localhost address",
    "qual é a porta padrão do vite?",
    "端口是多少？",
])
def test_a_settled_side_question_does_not_head_the_workflow(question):
    b = B()
    b.user(question)
    b.asst("It is usually 127.0.0.1 / 5173.")
    b.user("Add a retry with backoff to fetchOrders in src/api/orders.ts.")
    b.asst("I'll add it.")
    wf = workflow.build(scan(b.build()))
    assert wf.startswith("Add a retry with backoff") and question not in wf


def test_a_question_the_work_follows_from_or_answered_by_tools_stays():
    related = B()
    related.user("which retry library does the orders client use?")
    related.asst("It uses p-retry.")
    related.user("Then add p-retry backoff to the orders client too.")
    assert workflow.build(scan(related.build())).startswith("which retry library")
    looked = B()
    looked.user("what is in the docs folder?")
    looked.read("docs/index.md", "1\t# Docs\n")
    looked.asst("Only an index.")
    looked.user("Add a CONTRIBUTING guide.")
    assert workflow.build(scan(looked.build())).startswith("what is in the docs folder")
    last = B()
    last.user("Add a CONTRIBUTING guide.")
    last.asst("Added.")
    last.user("whats the license?")
    assert "whats the license?" in workflow.build(scan(last.build()))


# --- the Gemini reader's cwd ------------------------------------------------------------------------------------


def test_gemini_cwd_from_a_relative_path_the_tools_resolved(tmp_path: Path):
    header = {"sessionId": "s-9", "projectHash": "cd" * 32, "startTime": "2026-05-02T09:00:00.000Z",
              "lastUpdated": "2026-05-02T09:00:00.000Z", "kind": "main"}
    call = {"id": "read_file_1_0", "name": "read_file", "args": {"file_path": "docs/a.md"}, "status": "error",
            "result": [{"functionResponse": {"id": "read_file_1_0", "name": "read_file",
                                             "response": {"error": "File not found: /srv/wiki/docs/a.md"}}}]}
    recs = [header,
            {"id": "u1", "timestamp": "2026-05-02T09:00:01.000Z", "type": "user", "content": [{"text": "read docs/a.md"}]},
            {"id": "g1", "timestamp": "2026-05-02T09:00:02.000Z", "type": "gemini", "content": "", "toolCalls": [call]}]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in recs) + b"\n")
    assert read_transcript(str(path)).meta.cwd == "/srv/wiki"
    listing = {"id": "ls_1", "name": "list_directory", "args": {"dir_path": "."}, "status": "success",
               "result": [{"functionResponse": {"id": "ls_1", "name": "list_directory",
                                                "response": {"output": "Directory listing for /opt/site:\n[DIR] src"}}}]}
    recs[2] = {**recs[2], "toolCalls": [listing]}
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in recs) + b"\n")
    assert read_transcript(str(path)).meta.cwd == "/opt/site"


def test_shellenv_finds_nothing_in_a_plain_session():
    b = B()
    b.user("run the tests")
    _shell(b, "Bash", "pytest -q", "3 passed in 0.1s")
    b.asst("All green.")
    assert shellenv.build(scan(b.build())) == []


def test_a_task_of_command_lines_is_shown_as_commands():
    b = B()
    b.user("Fix the typo in README.md.")
    b.asst("Fixed.")
    b.user("git add README.md\ngit commit -m \"docs: typo\"\ngit push")
    wf = workflow.build(scan(b.build()))
    assert wf.endswith('`git add README.md`; `git commit -m "docs: typo"`; `git push`')
