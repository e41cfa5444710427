"""Done tells the truth and Remaining is what is really open (issue 12, 2.4 / 2.5 / 2.6): the phrasing families of
pipeline.stages.rules.position (Done / Remaining) and pipeline.stages.rules.tools (what a command proved)."""

from __future__ import annotations

import pytest

from pipeline.stages import distil
from pipeline.stages.rules import tools
from pipeline.stages.rules.remaining import open_items_in
from rules_builder import B


def position(b: B):
    p = distil.run(b.build()).position
    return p.current, p.done, p.remaining


# --- Remaining: open-item heads anywhere in a line, in several languages -------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Build is green. Still to do: bump the chart version; tag the release", ["bump the chart version", "tag the release"]),
        ("Migrated 14 of 16 tables. Remaining: `audit_log` and `sessions`", ["`audit_log` and `sessions`"]),
        ("The invoice PDF renders again. TODO: localise the VAT line", ["localise the VAT line"]),
        ("**Próximos passos:**\n1. Criar o índice em `orders.created_at`\n2. Rodar o backfill", ["Criar o índice em `orders.created_at`", "Rodar o backfill"]),
        ("La API ya responde. Pendiente: documentar el endpoint /v2/refunds", ["documentar el endpoint /v2/refunds"]),
        ("导出功能已经完成。下一步：给 CSV 导出加上分页", ["给 CSV 导出加上分页"]),
        ("## 待办\n- 补充 rate_limit 的单元测试\n- 更新 README", ["补充 rate_limit 的单元测试", "更新 README"]),
        ("移行は完了しました。残り：`users` テーブルのインデックス", ["`users` テーブルのインデックス"]),
        ("빌드는 통과했습니다. 남은 작업: 배포 스크립트 수정", ["배포 스크립트 수정"]),
    ],
)
def test_open_item_heads_anywhere_in_a_line_and_in_other_languages(text, expected):
    assert open_items_in(text) == expected


def test_an_open_head_inside_a_sentence_or_a_code_block_is_not_one():
    assert open_items_in("I removed the stale `TODO:` comment from parser.py.") == []
    assert open_items_in("```\n# TODO: drop this shim\n```\nAll done.") == []
    assert open_items_in("The remaining work was trivial and is finished.") == []


def test_next_steps_items_take_the_command_block_under_them_and_fold_sub_items():
    text = (
        "Everything is set up.\n\n**Next steps:**\n\n"
        "1. **Fill in the secrets in `.env.local`:**\n   - get the Stripe key from the dashboard\n   - paste it\n\n"
        "2. **Start the worker:**\n```bash\n# from the repo root\nmake worker\n```\n\n"
        "3. **Run the smoke test:**\n```sh\n./scripts/smoke.sh staging\n```\n"
    )
    assert open_items_in(text) == [
        "Fill in the secrets in `.env.local`",
        "Start the worker: `make worker`",
        "Run the smoke test: `./scripts/smoke.sh staging`",
    ]
    pt = "**Próximos passos:**\n1. **Suba o banco:**\n```bash\ndocker compose up -d db\n```"
    assert open_items_in(pt) == ["Suba o banco: `docker compose up -d db`"]


# --- Remaining: a check whose last run failed ----------------------------------------------------------------


@pytest.mark.parametrize(
    "cmd, output, error, key",
    [
        ("npm test", "FAIL src/cart.test.ts\n  ● total › rounds\nTests:       2 failed, 31 passed, 33 total", True, "npm test"),
        ("cd api && uv run pytest -q", "F..\n1 failed, 2 passed in 0.40s", True, "pytest -q"),
        ("cargo test --workspace", "test result: FAILED. 10 passed; 1 failed; 0 ignored", False, "cargo test --workspace"),
        ("go test ./...", "--- FAIL: TestParse (0.00s)\nFAIL\tgithub.com/acme/cfg\t0.01s", False, "go test ./..."),
        ("npx tsc --noEmit", "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.", False, "npx tsc --noEmit"),
    ],
)
def test_a_check_whose_last_run_failed_is_remaining_with_its_failure_line(cmd, output, error, key):
    b = B()
    b.user("Make the suite green.")
    b.bash(cmd, output, error=error)
    b.asst("Done.")
    _, done, remaining = position(b)
    item = next(x for x in remaining if x.startswith("Get `"))
    assert key in item and "last run failed" in item
    assert not any(x.startswith("Ran `") for x in done)  # exit code 0 is no pass when the runner says FAIL


def test_a_passing_rerun_clears_the_failure_and_a_filtered_rerun_does_not():
    b = B()
    b.user("Fix the flaky export test.")
    b.bash("python -m pytest -q tests/export", "1 failed, 9 passed", error=True)
    b.bash("pytest -q tests/export 2>&1 | grep FAIL", "")  # outcome not shown
    b.asst("Fixed.")
    _, done, remaining = position(b)
    assert any("pytest" in x and "last run failed" in x for x in remaining)
    assert not any("passed" in x for x in done)
    b.bash(".venv/bin/pytest -q tests/export", "10 passed in 0.9s")
    _, done, remaining = position(b)
    assert not any("last run failed" in x for x in remaining)
    assert "Ran `.venv/bin/pytest -q tests/export` (passed)" in done


@pytest.mark.parametrize(
    "cmd, output",
    [
        ("pytest -q | tail -3", "...\n3 passed in 0.12s"),
        ("cargo test 2>&1 | tail -5", "test result: ok. 12 passed; 0 failed; 0 ignored"),
        ("npx jest || true", "Tests:       8 passed, 8 total"),
    ],
)
def test_a_filtered_run_passes_only_by_its_runner_summary(cmd, output):
    b = B()
    b.user("Run the tests.")
    b.bash(cmd, output)
    _, done, _ = position(b)
    assert any(x.startswith("Ran `") and x.endswith("(passed)") for x in done)


@pytest.mark.parametrize(
    "cmd", ["npm test | tail -5", "make test || true", "pytest -x; echo done", "yarn test 2>/dev/null || echo 'tests failed'"]
)
def test_a_filtered_run_without_a_summary_is_not_written_as_passed(cmd):
    b = B()
    b.user("Run the tests.")
    b.bash(cmd, "done")
    _, done, remaining = position(b)
    assert done == [] and not any("last run failed" in x for x in remaining)


# --- Remaining: the agent's unanswered question or offer --------------------------------------------------------


@pytest.mark.parametrize(
    "last, expected",
    [
        ("The changelog is written. Shall I open the PR against the release branch?", "Shall I open the PR against the release branch?"),
        ("I found two configs. Does your repo have a separate staging values file?", "Does your repo have a separate staging values file?"),
        ("O schema está pronto. Quer que eu gere a migração agora?", "Quer que eu gere a migração agora?"),
        ("迁移脚本已经写好了。要我现在在测试库上执行吗？", "要我现在在测试库上执行吗？"),
        ("The exporter streams rows now. I can also wire it into the nightly cron job.", "I can also wire it into the nightly cron job."),
    ],
)
def test_an_unanswered_question_or_offer_at_the_end_is_remaining(last, expected):
    b = B()
    b.user("Port the exporter to async.")
    b.edit("src/exporter.py")
    b.asst(last)
    _, _, remaining = position(b)
    assert remaining[0] == "Waiting for the user: " + expected


@pytest.mark.parametrize(
    "last",
    ["All done. Anything else?", "Fixed. Let me know if you have any questions!", "The CSV export is finished."],
)
def test_small_talk_and_plain_endings_are_not_open_items(last):
    b = B()
    b.user("Port the exporter to async.")
    b.asst(last)
    _, _, remaining = position(b)
    assert remaining == []


def test_an_answered_question_is_not_remaining():
    b = B()
    b.user("Port the exporter to async.")
    b.asst("Shall I also port the importer?")
    b.user("no, only the exporter")
    _, _, remaining = position(b)
    assert not any(x.startswith("Waiting for the user") for x in remaining)


# --- Done: shell writes, commits, CLI creations, pushes, local checks -----------------------------------------------


@pytest.mark.parametrize(
    "cmd, expected",
    [
        ("cat > src/config/limits.yaml <<'EOF'\nburst: 20\nrate: 5 | 10\nEOF", [("src/config/limits.yaml", True)]),
        ("echo 'PORT=8080' | tee -a .env.example", [(".env.example", False)]),
        ("sed -i 's/v1/v2/g' docs/api.md charts/values.yaml", [("docs/api.md", False), ("charts/values.yaml", False)]),
        ("cp templates/nginx.conf deploy/nginx.conf && mv old.sql migrations/0007_init.sql",
         [("deploy/nginx.conf", True), ("migrations/0007_init.sql", True)]),
        ("printf '%s\\n' one two > fixtures/names.txt 2>/dev/null", [("fixtures/names.txt", True)]),
        ("apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: app/models.py\n@@\n-x\n+y\n*** End Patch\nPATCH",
         [("app/models.py", False)]),
    ],
)
def test_shell_writes_count_as_edits(cmd, expected):
    assert tools.shell_edits(cmd) == expected


def test_shell_edits_join_the_edit_runs_of_done_and_scratch_files_do_not():
    b = B(cwd="/home/dev/shop")
    b.user("Raise the burst limit.")
    b.bash("cat > /home/dev/shop/config/limits.yaml <<'EOF'\nburst: 40\nEOF")
    b.bash("sed -i 's/20/40/' docs/limits.md")
    b.bash("cat > /tmp/probe.py <<'EOF'\nprint(1)\nEOF")
    b.bash("sed -i 's/a/b/' src/missing.py", "sed: can't read src/missing.py: No such file or directory", error=True)
    _, done, _ = position(b)
    assert done == ["Edited docs/limits.md; created config/limits.yaml"]


def test_a_commit_names_its_id_and_nothing_to_commit_is_not_done():
    b = B()
    b.user("Commit it.")
    b.bash('git commit -m "Cap the export batch at 500 rows"', "[main 3fa9c21] Cap the export batch at 500 rows\n 2 files changed")
    b.bash('git commit -am "again"', "On branch main\nnothing to commit, working tree clean")
    b.bash("git add -A && git commit -F msg.txt", "[release/2.4 (root-commit) 0b1c2d3] Initial import")
    _, done, _ = position(b)
    assert done == ['Committed 3fa9c21 "Cap the export batch at 500 rows"', 'Committed 0b1c2d3 "Initial import"']


@pytest.mark.parametrize(
    "cmd, output, expected",
    [
        ("gh pr create --base release --title 'Fix VAT rounding' --body x",
         "Creating pull request for fix/vat into release in acme/shop\n\nhttps://github.com/acme/shop/pull/812\n",
         "Opened pull request: https://github.com/acme/shop/pull/812"),
        ("gh issue create --title 'Flaky export test' --body-file notes.md",
         "https://github.com/acme/shop/issues/4410", "Created issue: https://github.com/acme/shop/issues/4410"),
        ("fly deploy --remote-only", "==> Building image\nVisit your newly deployed app at https://shop-api.fly.dev/",
         "Deployed with `fly deploy`: https://shop-api.fly.dev/"),
        ("npm publish --access public", "npm notice Publishing to https://registry.npmjs.org/\n+ @acme/money@1.4.0",
         "Published with `npm publish`: @acme/money@1.4.0"),
    ],
)
def test_things_created_through_a_cli_are_done_with_their_identifiers(cmd, output, expected):
    b = B()
    b.user("Ship it.")
    b.bash(cmd, output)
    _, done, _ = position(b)
    assert done == [expected]


def test_a_failed_deploy_or_push_is_not_done_but_remaining():
    b = B()
    b.user("Deploy and push.")
    b.bash("vercel --prod", "Error: The deployment failed: build step exited with 1", error=True)
    b.bash("git push origin main", "To github.com:acme/shop.git\n ! [rejected]        main -> main (fetch first)\n"
           "error: failed to push some refs to 'github.com:acme/shop.git'")
    _, done, remaining = position(b)
    assert done == []
    assert any(x.startswith("Retry `vercel --prod`: last attempt failed") for x in remaining)
    assert any(x.startswith("Retry `git push origin main`: last attempt failed") for x in remaining)
    b.bash("git pull --rebase && git push origin main", "To github.com:acme/shop.git\n   1a2b3c4..5d6e7f8  main -> main")
    _, done, remaining = position(b)
    assert "Pushed origin main" in done
    assert not any("git push" in x for x in remaining)


@pytest.mark.parametrize(
    "cmd, output, expected",
    [
        ("curl -s http://localhost:8000/health", '{"status":"ok","db":"up"}',
         'Checked http://localhost:8000/health (curl): {"status":"ok","db":"up"}'),
        ("wget -qO- http://127.0.0.1:5173/", "<!doctype html>\n<html>", "Checked http://127.0.0.1:5173/ (wget): <!doctype html>"),
        ("http :3000/api/orders?limit=1", '[{"id": 17}]', 'Checked localhost:3000/api/orders?limit=1 (http): [{"id": 17}]'),
    ],
)
def test_a_successful_local_request_is_a_check_in_done(cmd, output, expected):
    b = B()
    b.user("Is the server up?")
    b.bash(cmd, output)
    _, done, _ = position(b)
    assert done == [expected]


@pytest.mark.parametrize(
    "cmd, output, error",
    [
        ("curl http://localhost:8000/", "curl: (7) Failed to connect to localhost port 8000: Connection refused", True),
        ("curl -i http://localhost:8000/api/chat", "HTTP/1.1 500 Internal Server Error\ncontent-length: 21", False),
        ("curl -fsSL https://get.example.com/install.sh", "#!/bin/sh\necho installing", False),
    ],
)
def test_a_refused_or_failing_or_remote_request_is_no_check(cmd, output, error):
    b = B()
    b.user("Is the server up?")
    b.bash(cmd, output, error=error)
    _, done, _ = position(b)
    assert done == []


def test_commits_a_sub_agent_reports_are_done_and_history_it_lists_is_not():
    b = B()
    b.user("Commit the work in logical units through the committer agent.")
    b.subagent(
        "Commit changes",
        "**Commits created**\n- `a1b2c3d` — `Billing // Add proration`\n- `9e8f7a6` — `Docs // Proration notes`\n\n"
        "**Recent commits before this run**\n- `1234abc` — `Initial`",
        agent="committer",
    )
    _, done, _ = position(b)
    assert done == [
        'Committed a1b2c3d "Billing // Add proration" (committer sub-agent)',
        'Committed 9e8f7a6 "Docs // Proration notes" (committer sub-agent)',
    ]


@pytest.mark.parametrize("cmd, output, outcome", [
    ("make -j4 2>&1 | tail -3", "[ 85%] Linking C executable app\n[100%] Built target app", "passed"),
    ("make -j4 2>&1 | tail -3", "make[2]: *** [CMakeFiles/app.dir/main.c.o] Error 1\nmake: *** [Makefile:136: all] Error 2",
     "failed"),
    ("make increment_build_number", "make: *** No rule to make target 'increment_build_number'.  Stop.", "failed"),
])
def test_make_reports_its_outcome_even_behind_a_filter(cmd, output, outcome):
    assert tools.check_runs(cmd, _result(output))[0][3] == outcome


def _result(text):
    from pipeline.transcripts.model import Event
    return Event(index=1, kind="tool_result", text=text)


def test_a_failure_a_later_run_of_the_same_program_settled_is_not_remaining():
    b = B()
    b.user("bump the build number on every build")
    b.bash("make increment_build_number", "make: *** No rule to make target 'increment_build_number'.  Stop.",
           error=True)
    b.edit("CMakeLists.txt")
    b.bash("make -j4 2>&1 | tail -2", "[100%] Built target app")
    b.asst("The build number now increments on every build.")
    _, _, remaining = position(b)
    assert not any("last run failed" in x for x in remaining)


def test_cp_and_mv_redirections_are_not_files():
    assert tools.shell_edits("mv build/Makefile /var/stale/Makefile 2>/dev/null; mv a b 2> err.log") == [
        ("/var/stale/Makefile", True), ("b", True)]


@pytest.mark.parametrize("cmds, expected", [
    ([('bd create "Strip task management" -t epic --json', '{\n  "id": "eng-gsa",\n  "title": "Strip task management"\n}'),
      ('bd create "Phase 1: remove dispatch" --parent eng-gsa', '{"id": "eng-gsa.1"}'),
      ('bd create "Phase 2: remove services" --parent eng-gsa', '{"id": "eng-gsa.2"}')],
     'Created 3 records with `bd create`: eng-gsa "Strip task management" … eng-gsa.2'),
    ([("az boards work-item create --title 'Rotate the API keys' --type Task -o json", '{"id": 4211, "rev": 1}')],
     'Created 4211 "Rotate the API keys" with `az boards work-item create`'),
    ([("tk new 'Flaky export test' --json", '{"key": "TK-12", "url": "https://tk.example/TK-12"}')],
     'Created TK-12 "Flaky export test" with `tk new`'),
])
def test_records_a_cli_created_are_done_with_their_ids(cmds, expected):
    b = B()
    b.user("break the feature down into tracker items")
    for cmd, out in cmds:
        b.bash(cmd, out)
    b.asst("Done.")
    _, done, _ = position(b)
    assert done == [expected]


def test_package_managers_adding_things_make_no_record():
    b = B()
    b.user("add the dependency")
    b.bash("npm add left-pad --json", '{"id": "left-pad@1.3.0"}')
    b.bash("uv add httpx", "Resolved 12 packages")
    _, done, _ = position(b)
    assert done == []


@pytest.mark.parametrize("command, expected", [
    ('["bash","-lc","cat <<\'EOF\' > specs/tasks.md\\n---\\ntitle: Tasks\\nEOF"]', [("specs/tasks.md", True)]),
    ('["bash","-lc","sed -i \'s/a/b/\' src/app.py"]', [("src/app.py", False)]),
    ("perl -0pi -e 's/_X = bool\\(x\\)\\n    _Y/_X = 1\\n", []),  # the script is cut off: no file is named
])
def test_codex_argv_commands_and_cut_off_scripts(command, expected):
    b = B()
    b.user("write the task list")
    c = b.call("shell", command, text=f"command: {command}")
    ev = b.events[c]
    assert tools.shell_edits(tools.raw_command(ev), ev.text) == expected


@pytest.mark.parametrize("cmd", ["uv run --with pytest pytest", "uv run --extra dev pytest -q", "uvx pytest"])
def test_uv_wrappers_keep_the_runner_key(cmd):
    b = B()
    b.user("run the tests")
    b.bash("uv run pytest", "error: Failed to spawn: `pytest`", error=True)
    b.bash(cmd, "12 passed in 0.9s")
    _, done, remaining = position(b)
    assert f"Ran `{cmd}` (passed)" in done and not any("last run failed" in x for x in remaining)


@pytest.mark.parametrize("path", [
    "/Users/dev/.claude/plans/functional-greeting-rivest.md",
    "/home/dev/.gemini/tmp/9dc5818b/plans/mosaic_grid.md",
    "/tmp/probe.py",
])
def test_plan_and_scratch_files_of_the_harness_are_not_done(path):
    b = B(cwd="/home/dev")
    b.user("plan the refactor, then do it")
    b.edit(path, tool="Write")
    b.edit("/home/dev/shop/src/grid.ts")
    b.asst("Done.")
    _, done, _ = position(b)
    assert done == ["Edited shop/src/grid.ts"]
