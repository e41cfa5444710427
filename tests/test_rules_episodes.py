"""Episodes and the Position they give (pipeline.stages.rules.episodes, current, remaining; issue 21 item 1): the
session cut into requests, each with its outcome, and Current / Remaining read from those states rather than from
the last message's wording.  Every family is tried in several wordings, tools and languages."""

from __future__ import annotations

import pytest

from pipeline.stages import distil
from pipeline.stages.rules import episodes
from pipeline.stages.rules.scan import scan
from rules_builder import B


def position(b: B):
    p = distil.run(b.build()).position
    return p.current, p.done, p.remaining


def states(b: B) -> list[str]:
    return [ep.state for ep in episodes.episodes(scan(b.build()))]


# --- states ----------------------------------------------------------------------------------------------------


def test_states_of_finished_failed_unverified_and_unanswered_episodes():
    b = B()
    b.user("fix the rounding in invoice totals")
    b.edit("src/billing/totals.py")
    b.bash("pytest -q tests/billing", "12 passed in 0.4s")
    b.asst("Rounding fixed; the billing tests pass.")
    b.user("now make the VAT line use banker's rounding")
    b.edit("src/billing/vat.py")
    b.bash("pytest -q tests/billing", "1 failed, 11 passed", error=True)
    b.asst("One VAT test still fails.")
    b.user("also round the discount line")
    b.edit("src/billing/discount.py")
    b.asst("Done, the discount line is rounded too.")
    b.user("and the shipping line?")
    assert states(b) == ["verified", "failed", "unverified", "unanswered"]


@pytest.mark.parametrize("tool, text", [
    ("Bash", "command: nohup python train.py --epochs 300 > train.log 2>&1 &\necho started"),
    ("Bash", "command: python train.py --epochs 300\nrun_in_background: true"),
    ("powershell", "command: python train.py --epochs 300\nmode: async"),
])
def test_a_background_job_not_seen_ending_is_running(tool, text):
    b = B()
    b.user("start the training run")
    b.call(tool, "python train.py --epochs 300", text=text)
    b.result("Training PID: 4242")
    b.asst("The run is going: 300 epochs, checkpoints land in runs/latest/.")
    current, _, _ = position(b)
    assert states(b) == ["running"]
    assert current.startswith("start the training run — `")
    assert "python train.py --epochs 300` running in the background" in current


def test_a_background_job_killed_later_is_not_running():
    b = B()
    b.user("start the dev server and check the home page")
    b.bash("npm run dev > dev.log 2>&1 &", "[1] 31337")
    b.bash("curl -s http://localhost:5173/", "<!doctype html>")
    b.bash("kill 31337", "")
    b.asst("The home page renders; I stopped the server again.")
    assert states(b) == ["done"]


@pytest.mark.parametrize("report", [
    "Tests are green now.",
    "Os testes passaram.",
    "测试已经全部通过。",
])
def test_tests_reported_passing_while_the_last_run_failed_is_current(report):
    b = B()
    b.user("fix the flaky export test")
    b.edit("src/export.py")
    b.bash("npm test", "FAIL src/export.test.ts\nTests:       2 failed, 31 passed, 33 total", error=True)
    b.user("is it tested?")
    b.bash("npm test 2>&1 | tail -5", "Tests:       2 failed, 31 passed, 33 total")
    b.asst(report)
    current, _, _ = position(b)
    assert current.startswith("is it tested? — `npm test` failed: Tests:       2 failed".replace("       ", " "))


def test_working_names_the_request_and_the_last_stated_step():
    b = B()
    b.user("open the settings page in the browser")
    b.call("browser_tabs", "list", text="action: list")
    b.result('{"tabs": [{"url": "http://localhost:3000/settings"}]}')
    b.asst("The tab is already open. Let me take a screenshot of it.")
    b.call("browser_screenshot", "tab 1", text="tab: 1")
    b.result("Saved screenshot ss_01")
    current, _, _ = position(b)
    assert current == "open the settings page in the browser — Let me take a screenshot of it."


def test_a_completion_call_is_the_report():
    b = B()
    b.user("post 'deploy done' to the team channel")
    b.call("notify", "team", text="channel: team\ntext: deploy done")
    b.result('{"posted": true}')
    b.call("task_complete", "Posted 'deploy done' to the team channel.",
           text="summary: Posted 'deploy done' to the team channel.")
    current, _, _ = position(b)
    assert current == "post 'deploy done' to the team channel — finished: Posted 'deploy done' to the team channel."


def test_finished_names_the_commit_and_the_files():
    b = B()
    b.user("yes, fix that compile error too")
    b.edit("fleet/do_everything.c")
    b.bash("make -j4 2>&1 | tail -3", "[ 85%] Linking C executable FC-1\n[100%] Built target FC-1")
    b.bash('git commit -am "Include messages.h in do_everything.c"', "[main 5e6f7a8] Include messages.h in do_everything.c")
    b.asst("Both tasks completed successfully:\n\n## Summary\n\nThe build is green again.")
    current, _, _ = position(b)
    assert "committed 5e6f7a8" in current and "`make -j4` passed" in current and "do_everything.c" in current
    assert current.endswith("The build is green again.")


# --- Remaining -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool, edit_text, read_cmd", [
    ("Edit", "file_path: specs/tasks.md\nold_string: - [ ] T004 Draft the schema\nnew_string: - [x] T004 Draft the schema",
     "cat specs/tasks.md"),
    ("apply_patch", "*** Begin Patch\n*** Update File: specs/tasks.md\n@@\n-- [ ] T004 Draft the schema\n"
                    "+- [X] T004 Draft the schema\n*** End Patch", "sed -n 1,80p specs/tasks.md"),
    ("replace", "file_path: specs/tasks.md\nold_string: * [ ] T004 Draft the schema\nnew_string: * [x] T004 Draft the schema",
     "type specs\\tasks.md"),
])
def test_a_checklist_file_the_agent_ticks_gives_its_open_boxes(tool, edit_text, read_cmd):
    b = B()
    b.user("implement T004")
    b.bash(read_cmd, "# Tasks\n- [x] T003 Init\n- [ ] T004 Draft the schema\n- [ ] T005 Write .env.example\n"
                     "- [ ] T006 Firebase client wrapper")
    b.call(tool, "specs/tasks.md", text=edit_text)
    b.result("Success. Updated the following files: M specs/tasks.md")
    b.asst("T004 is done.")
    _, _, remaining = position(b)
    assert remaining == ["T005 Write .env.example (tasks.md)", "T006 Firebase client wrapper (tasks.md)"]


@pytest.mark.parametrize("path, new, comment", [
    ("modules/kde.nix", "  # TODO: re-enable plasma-manager once imports work\n  # programs.plasma.enable = true;",
     "TODO: re-enable plasma-manager once imports work"),
    ("src/api/client.ts", "  // FIXME: retry on 429 instead of failing\n  return fetch(url);",
     "FIXME: retry on 429 instead of failing"),
    ("db/views.sql", "-- TODO: index orders(created_at) before the backfill\nCREATE VIEW v AS SELECT 1;",
     "TODO: index orders(created_at) before the backfill"),
])
def test_a_todo_marker_the_agent_left_is_remaining_until_an_edit_removes_it(path, new, comment):
    b = B()
    b.user("get the build green, disable what you must")
    b.call("Edit", path, text=f"file_path: {path}\nold_string: x\nnew_string: {new}")
    b.result(f"The file {path} has been updated.")
    b.asst("Build is green; one part is disabled for now.")
    _, _, remaining = position(b)
    assert f"TODO left in {path}: {comment}" in remaining
    b.call("Edit", path, text=f"file_path: {path}\nold_string: {new}\nnew_string: x")
    b.result(f"The file {path} has been updated.")
    b.asst("Re-enabled it.")
    _, _, remaining = position(b)
    assert not any(x.startswith("TODO left in") for x in remaining)


@pytest.mark.parametrize("check, output", [
    ("pytest -q", "40 passed in 2.1s"),
    ("cargo build", "Finished dev [unoptimized + debuginfo] target(s) in 3.2s"),
    ("npm run build", "vite v6.4.2 building for production...\n✓ built in 1.2s"),
])
def test_code_edited_after_the_last_check_is_remaining_and_a_later_check_clears_it(check, output):
    b = B()
    b.user("refactor the grid into tiles")
    b.edit("src/grid.py")
    b.bash(check, output)
    b.edit("src/tile.py")
    b.edit("README.md")  # prose: no check exercises it
    b.asst("Refactor done.")
    _, _, remaining = position(b)
    assert f"Re-run `{check}`: src/tile.py changed after its last run" in remaining
    b.bash(check, output)
    b.asst("Checked again.")
    _, _, remaining = position(b)
    assert not any(x.startswith("Re-run") for x in remaining)


def test_edits_after_the_last_commit_are_remaining_unless_git_says_the_tree_is_clean():
    b = B()
    b.user("add the multiply helper and commit it")
    b.edit("src/math_utils.py")
    b.bash('git commit -am "Add multiply"', "[main 6322cf4] Add multiply")
    b.edit(".gitignore")
    b.asst("Committed; I also ignored __pycache__.")
    _, _, remaining = position(b)
    assert remaining == ["Commit the changes to .gitignore: made after the last commit (6322cf4)"]
    b.bash('git commit -am "Ignore caches"', "On branch main\nnothing to commit, working tree clean")
    b.asst("The .gitignore was already committed by the hook.")
    _, _, remaining = position(b)
    assert remaining == []


def test_no_commit_item_while_the_work_is_under_way():
    b = B()
    b.user("add the multiply helper")
    b.bash('git commit -am "wip"', "[main 1a2b3c4] wip")
    b.todos(("Write multiply", "completed"), ("Write its test", "in_progress"))
    b.edit("tests/test_math.py")
    b.asst("Writing the test now.")
    _, _, remaining = position(b)
    assert not any(x.startswith("Commit the changes") for x in remaining)


@pytest.mark.parametrize("offer, next_task", [
    ("The fix is on feature/app-cli. Would you like me to merge it back to `release_1_clean`?",
     "now write the debugging guide"),
    ("Quer que eu abra o PR para `hotfix-2024`?", "agora documente o deploy"),
    ("要我把 `legacy_api` 的调用也迁移过去吗？", "帮我写一下部署文档"),
])
def test_an_offer_naming_something_that_the_next_task_ignored_is_remaining(offer, next_task):
    b = B()
    b.user("finish the app: prefix feature")
    b.edit("src/cli.c")
    b.asst(offer)
    b.user(next_task)
    b.edit("docs/guide.md")
    b.asst("Guide written.")
    _, _, remaining = position(b)
    assert remaining[-1] == "Never answered: " + offer.split(". ")[-1]


def test_an_offer_that_names_nothing_or_is_taken_up_later_is_not_remaining():
    b = B()
    b.user("finish the feature")
    b.asst("Done. Would you like me to read the related documents?")
    b.user("write the guide")
    b.asst("Guide written.")
    assert position(b)[2] == []
    b = B()
    b.user("finish the feature")
    b.asst("Done. Would you like me to commit these changes to `feature_x`?")
    b.user("write the guide")
    b.bash('git commit -am "guide"', "[feature_x 9f9f9f9] guide")
    b.asst("Guide written and committed.")
    assert not any(x.startswith("Never answered") for x in position(b)[2])


@pytest.mark.parametrize("commands", [
    ['git init -b main && git add -A && git commit -m "Add build"', "gh repo create lab --public --source=. --push"],
    ["git push -u origin feature/login"],
    ["vercel --prod"],
])
def test_shipping_commands_handed_to_the_user_after_a_refusal_stay_open(commands):
    b = B()
    b.user("commit and push")
    b.bash("git status", "On branch main")
    b.bash(commands[0], "Permission for this action was denied by the auto mode classifier.", error=True)
    blocks = "\n\n".join(f"```\n! {c}\n```" for c in commands)
    b.asst("Blocked by the permission classifier. Run these yourself:\n\n" + blocks)
    b.user("add a readme")
    b.edit("README.md", tool="Write")
    b.asst("README added.")
    _, _, remaining = position(b)
    assert remaining[-1].startswith("commit and push: handed to the user — run `")
    assert commands[-1] in remaining[-1]


def test_handed_commands_are_swept_when_the_work_got_done_or_were_not_shipping():
    b = B()
    b.user("push it")
    b.bash("git push", "fatal: cannot lock ref 'HEAD': Permission denied", error=True)
    b.asst("Please fix the permissions:\n\n```bash\nsudo chown -R dev .git\n```")
    b.user("done, try again")
    b.bash("git push", "To github.com:x/y.git\n   1a2b3c4..5d6e7f8  main -> main")
    b.asst("Pushed.")
    assert position(b)[2] == []


def test_a_later_call_that_names_the_branch_without_doing_the_offer_does_not_take_it_up():
    b = B()
    b.user("add the app: prefix")
    b.edit("src/cli.c")
    b.asst("Committed on feature/app-cli. Would you like me to merge it back to `release_1_clean`?")
    b.user("set up a worktree for the maintainer")
    b.bash("git worktree add --detach ~/wt/maintainer release_1_clean", "Preparing worktree (detached HEAD 15b2983)")
    b.asst("Worktree ready.")
    assert position(b)[2] == ["Never answered: Would you like me to merge it back to `release_1_clean`?"]
    b.user("now merge it")
    b.bash("git checkout release_1_clean && git merge feature/app-cli", "Fast-forward")
    b.asst("Merged.")
    assert not any(x.startswith("Never answered") for x in position(b)[2])


@pytest.mark.parametrize("lead, heads", [
    ("Implement the following plan:", ("## Verification", "1. **Install:**", "2. **List:**", "3. **Try it in the IDE:**")),
    ("Implemente o plano abaixo:", ("## Verificação", "1. **Instalar:**", "2. **Listar:**", "3. **Testar no IDE:**")),
    ("按照下面的计划实现：", ("## 验证", "1. **安装：**", "2. **列出：**", "3. **在 IDE 里试一下：**")),
])
def test_a_plan_step_whose_command_never_ran_is_remaining(lead, heads):
    plan = (f"# Add the help command\n\n## Files\n\n- `src/templates/help.md`\n\n{heads[0]}\n\n"
            f"{heads[1]}\n   ```bash\n   tool install --force\n   ```\n\n{heads[2]}\n   ```bash\n   tool install --list\n   ```\n\n"
            f"{heads[3]}\n   ```\n   /tool:help\n   ```\n\n" + "Notes about templates and the installer.\n" * 20)
    b = B()
    b.user(lead + "\n\n" + plan)
    b.edit("src/templates/help.md", tool="Write")
    b.bash("uv run tool install --force", "Installed 7 templates")
    b.bash("uv run tool install --list", "help.md  Installed")
    b.asst("Implementation complete.")
    _, _, remaining = position(b)
    step = heads[3].strip("123. *").rstrip(":：*")
    assert remaining == [f"Plan step not run: {step}: `/tool:help`"]


def test_plan_steps_are_read_from_a_plan_approved_in_plan_mode():
    b = B()
    b.user("ship the migration")
    b.call("ExitPlanMode", "plan", text="plan: # Migration plan\n\n1. Run the dry run:\n```\n./migrate --dry-run\n```\n"
                                        "2. Apply it:\n```\n./migrate --apply\n```\n")
    b.result("User has approved your plan. You can now start coding.")
    b.bash("./migrate --dry-run", "42 rows would change")
    b.asst("Dry run looks right: 42 rows.")
    assert position(b)[2] == ["Plan step not run: Apply it: `./migrate --apply`"]


@pytest.mark.parametrize("stopped", [
    "[Request interrupted by user for tool use]",
    "The user doesn't want to proceed with this tool use. The tool use was rejected.",
    "Permission for this action was denied by the auto mode classifier. Reason: unknown wrapper.",
])
def test_a_check_the_user_stopped_or_the_harness_refused_is_no_failure_but_leaves_the_edit_unverified(stopped):
    b = B()
    b.user("send teamName with the registration")
    b.bash("pnpm build", "✓ built in 2.1s")
    b.edit("src/pages/RegisterPage.tsx")
    b.asst("Rebuilding to check it.")
    b.bash("pnpm build", stopped, error=True)
    current, _, remaining = position(b)
    assert not any("last run failed" in x for x in remaining)
    assert "Re-run `pnpm build`: src/pages/RegisterPage.tsx changed after its last run" in remaining
    if stopped.startswith(("[Request", "The user")):
        assert current.endswith("(interrupted by the user)")


@pytest.mark.parametrize("report", [
    "The spec is written.\n\nOutstanding: non-functional details are still light.",
    "A especificação está pronta.\n\nPendências: detalhes não funcionais ainda vagos.",
    "规格已写好。\n\n待办：非功能需求还不够具体。",
])
def test_open_items_of_a_task_the_user_moved_on_from_are_not_remaining(report):
    b = B()
    b.user("write the spec for the STT service")
    b.asst(report)
    b.user("now run the tests")
    b.bash("pytest -q", "12 passed in 0.9s")
    b.asst("All 12 tests pass.")
    assert position(b)[2] == []
    b = B()
    b.user("write the spec for the STT service")
    b.asst(report)
    assert position(b)[2] != []  # still the latest task's own open items


@pytest.mark.parametrize("agent, description", [
    ("Explore", "Audit every call site of the Redis client"),
    ("general-purpose", "Benchmark the three JSON parsers"),
    ("code-reviewer", "Revisar o PR #212 de ponta a ponta"),
])
def test_a_sub_agent_that_never_answered_is_running(agent, description):
    b = B()
    b.user("find out why checkout is slow")
    b.add("subagent_call", f"Investigate: {description}", tool_name="Task", target=description,
          call_id="toolu_bg01", agent=agent)
    b.asst("I started the sub-agent in the background; I will read its report when it is done.")
    current, _, _ = position(b)
    assert states(b) == ["running"]
    assert current == f"find out why checkout is slow — the {agent} sub-agent has not answered yet: {description}"


@pytest.mark.parametrize("report, step", [
    ("Root cause: the test imported the old client. Next: rewrite the test against the route.",
     "rewrite the test against the route"),
    ("A causa é o import antigo. Agora vou reescrever o teste.", "Agora vou reescrever o teste."),
    ("原因是测试导入了旧客户端。接下来重写这个测试。", "接下来重写这个测试。"),
])
def test_a_next_step_the_report_names_comes_before_the_failed_run_which_stays_remaining(report, step):
    b = B()
    b.user("add the health route")
    b.bash("pytest -q tests/test_health.py", "1 failed: ImportError: healthz needs Flask>=3.1", error=True)
    b.asst(report)
    current, _, remaining = position(b)
    assert current == "add the health route — " + step
    assert any("last run failed" in x for x in remaining)
