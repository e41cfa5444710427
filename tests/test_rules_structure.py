"""Facts and decisions read from the dialogue's structure (issue 21 §2): the agent's words after a result, an
unflagged error line, a failed command that worked after other changes, caveats in end-of-turn reports, a passing
claim a run disproves, files a commit left out, choices reported with their purpose, answers of question tools.

Every family is tested with phrasings, domains and languages invented here (never a development session's words).
"""

from __future__ import annotations

import pytest

from pipeline.stages import distil
from pipeline.stages.rules import reports, scope, struggle
from pipeline.stages.rules.scan import scan
from rules_builder import B, evidence_ok


def _facts(b: B) -> list[str]:
    t = b.build()
    d = distil.run(t)
    assert evidence_ok(t, d.facts) == []
    return [f.text for f in d.facts]


def _decisions(b: B) -> list[tuple[str, str]]:
    t = b.build()
    d = distil.run(t)
    assert evidence_ok(t, d.decisions) == []
    return [(x.status, x.what) for x in d.decisions]


# --- the agent's reading of a failure ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command, output, reading, term",
    [
        ("cargo build", "Exit code 101\nerror: linking with `cc` failed: exit status: 1",
         "The linker cannot find `libssl.so`; the system OpenSSL headers are missing in this image.", "libssl.so"),
        ("docker compose up -d", "Exit code 1\nError response from daemon: driver failed programming external connectivity",
         "Port `5433` is held by the host's own Postgres, so the container cannot bind it.", "5433"),
        ("npm run migrate", "Exit code 1\nError: relation \"orders\" does not exist",
         "迁移脚本在 `seed.sql` 之前运行，所以 orders 表还不存在。", "seed.sql"),
        ("python manage.py check", "Exit code 1\nImproperlyConfigured: SECRET_KEY not set",
         "`.env.local` 파일이 없어서 `SECRET_KEY`를 읽지 못합니다.", ".env.local"),
    ],
)
def test_the_agents_reading_of_a_failure_is_a_fact(command, output, reading, term):
    b = B()
    b.user("get the service running")
    b.bash(command, output, error=True)
    b.read("/home/dev/shop/README.md")  # looking around does not end the reading
    b.asst(reading + " Let me fix that.")
    b.edit("/home/dev/shop/settings.py")
    assert any(term in f and reading.split(" ")[0] in f for f in _facts(b))


@pytest.mark.parametrize(
    "sentence",
    [
        "Let me check the logs next.",  # the next step, not a finding
        "Now I'll try again with the other flag.",
        "让我再试一次。",
        "Does this need a restart?",  # a question
        "The fix is below:",  # a lead-in
        "Created `src/app/config.py` with the defaults.",  # what the agent did
    ],
)
def test_narration_questions_and_action_reports_are_not_findings(sentence):
    b = B()
    b.user("fix the build")
    b.bash("make", "Exit code 2\nmake: *** No rule to make target 'dist'.  Stop.", error=True)
    b.asst(sentence)
    b.edit("/home/dev/shop/Makefile")
    assert all(sentence.rstrip(".!:?。") not in f for f in _facts(b))


@pytest.mark.parametrize(
    "command, output, reading, word",
    [
        ("./deploy.sh push", "Copying build…\nscp: /srv/bin/api: Text file busy\nRestarting…",
         "I see the binary was busy, so the copy never replaced it.", "busy"),
        ("rsync -a dist/ web:/var/www", "sending incremental file list\nrsync: mkdir \"/var/www/v2\": Permission denied\ndone",
         "The permission was denied on the web host.", "Permission denied"),
        ("./start_db.sh", "starting…\nlisten tcp 0.0.0.0:5432: bind: address already in use\nok",
         "Something else already uses the address.", "already in use"),
    ],
)
def test_an_error_line_the_harness_did_not_flag_is_a_fact(command, output, reading, word):
    b = B()
    b.user("deploy it")
    b.bash(command, output)  # the call did not fail: the script went on after the error
    b.asst(reading)
    b.bash("./deploy.sh stop && " + command, "ok")
    got = _facts(b)
    assert any(word.lower() in f.lower() and command.split()[0] in f for f in got)


def test_an_error_word_in_read_output_is_no_anomaly():
    b = B()
    b.user("look at the handler")
    b.bash("grep -rn 'Permission denied' src/", "src/auth.py:40:    raise Forbidden('Permission denied')")
    b.asst("The handler raises it for anonymous users.")
    assert not [f for f in _facts(b) if "printed" in f]


# --- fixed after other changes -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "failed, error, changes, term",
    [
        ("make firmware", "make: *** No rule to make target 'firmware'.  Stop.",
         ["rm /home/dev/fw/CMakeCache.txt", "cmake -S . -B build"], "CMakeCache.txt"),
        ("systemctl start api", "Job for api.service failed because the control process exited with error code.",
         ["sudo chown api:api /var/lib/api", "sudo chmod 750 /var/lib/api"], "chown"),
        ("npm run dev", "Error: listen EADDRINUSE: address already in use :::3000",
         ["kill 4242"], "kill 4242"),
    ],
)
def test_a_failed_command_that_worked_after_other_changes_names_them(failed, error, changes, term):
    b = B()
    b.user("start it")
    b.bash(failed, "Exit code 1\n" + error, error=True)
    b.bash("ls -la", "total 0")  # a look around is not a change
    for c in changes:
        b.bash(c, "")
    b.bash(failed, "ok")
    got = [f for f in _facts(b) if "worked after" in f]
    assert got and term in got[0] and "ls -la" not in got[0]


def test_a_code_fix_by_edits_alone_is_not_fixed_after():
    b = B()
    b.user("fix the test")
    b.bash("pytest -q tests/test_cart.py", "Exit code 1\nE   AssertionError: assert 3 == 4\n1 failed", error=True)
    b.edit("/home/dev/shop/cart.py")
    b.bash("pytest -q tests/test_cart.py", "1 passed")
    assert not [f for f in _facts(b) if "worked after" in f]


# --- the end-of-turn report ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "report, term",
    [
        ("Done: the exporter streams rows now. The `--since` flag is still not wired into `export_cli.py`.", "--since"),
        ("Pronto. A migração `0042_orders` ainda não foi aplicada em produção.", "0042_orders"),
        ("完成了导出功能，CSV 现在按行写出。`retry_policy.yaml` 还没有被任何服务读取。", "retry_policy.yaml"),
    ],
)
def test_a_caveat_in_the_report_is_a_fact(report, term):
    b = B()
    b.user("make the exporter stream")
    b.edit("/home/dev/shop/export.py")
    b.asst(report + " " + "x" * 0)
    assert any(term in f for f in _facts(b))


@pytest.mark.parametrize(
    "run, output, claim",
    [
        ("npm test", "Exit code 1\n Tests  4 failed | 120 passed (124)", "All set ✅ the fixes are tested and everything passes."),
        ("pytest -q", "Exit code 1\n3 failed, 97 passed in 4.2s", "Yes, this has been tested: the suite passes apart from flaky mocks."),
        ("go test ./...", "Exit code 1\n--- FAIL: TestQuota (0.01s)\nFAIL\tshop/quota\t0.02s", "测试已经通过，可以合并。"),
    ],
)
def test_a_passing_claim_the_last_run_disproves_is_a_fact(run, output, claim):
    b = B()
    b.user("fix the quota bug and make sure it's tested")
    b.edit("/home/dev/shop/quota.py")
    b.bash(run, output, error=True)
    b.asst(claim + " The change is in quota.py and the handler now reads the limit from the settings module.")
    got = [f for f in _facts(b) if f.startswith("Reported as passing")]
    assert got and run.split()[0] in got[0]


def test_a_claim_after_a_passing_last_run_is_not_disproved():
    b = B()
    b.user("fix it")
    b.edit("/home/dev/shop/quota.py")
    b.bash("pytest -q", "Exit code 1\n1 failed, 9 passed", error=True)
    b.edit("/home/dev/shop/quota.py")
    b.bash("pytest -q", "10 passed")
    b.asst("All tests pass now; the quota is read from the settings module instead of a constant in quota.py.")
    assert not [f for f in _facts(b) if f.startswith("Reported as passing")]


# --- what a commit left out -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "status, said, left",
    [
        (" M src/api.py\n M src/legacy/billing.c\n", "billing.c has an unrelated change; I'll commit only the API.", "billing.c"),
        ("On branch main\nChanges not staged for commit:\n\tmodified:   app/views.py\n\tmodified:   app/settings_local.py\n",
         "settings_local.py holds your local overrides, so it stays out.", "settings_local.py"),
        (" M web/index.ts\n M web/vendor/patch.diff\n", "patch.diff 是别的修复，不提交。", "patch.diff"),
    ],
)
def test_a_file_the_agent_left_out_of_a_commit_is_a_fact(status, said, left):
    b = B()
    b.user("commit the API change")
    b.bash("git status", status)
    b.asst(said)
    kept = [p for p in ("src/api.py", "app/views.py", "web/index.ts") if p in status][0]
    b.bash(f"git add {kept} && git commit -m 'Change the API'", "[main 1a2b3c4] Change the API\n 1 file changed")
    got = [f for f in _facts(b) if f.startswith("Left out of the commit")]
    assert got and left in got[0] and "1a2b3c4" in got[0]


def test_pre_existing_changes_nobody_looked_at_are_not_reported():
    b = B()
    b.user("commit it")
    b.bash("git status --short", " M src/api.py\n M docs/old_plan.md\n M docs/notes.md\n")
    b.bash("git add src/api.py && git commit -m 'API'", "[main 9f8e7d6] API\n 1 file changed")
    assert not [f for f in _facts(b) if f.startswith("Left out")]


# --- choices reported with their purpose -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line, what",
    [
        ("- Replaced the hand-rolled LRU with `functools.lru_cache` to drop 80 lines of locking code", "functools.lru_cache"),
        ("- Switched `reqwest` to rustls so that the musl build needs no OpenSSL", "reqwest"),
        ("- Added `idempotency_key` to the order table because retries created duplicate orders", "idempotency_key"),
    ],
)
def test_a_reported_change_with_its_purpose_is_a_decision(line, what):
    b = B()
    b.user("clean up the cache layer")
    b.edit("/home/dev/shop/cache.py")
    b.asst("Summary of the changes:\n\n" + line + "\n- Updated the docs\n")
    got = [w for st, w in _decisions(b) if st == "APPROVED"]
    assert any(what in w for w in got)


def test_a_commit_message_bullet_with_a_purpose_is_a_decision():
    b = B()
    b.user("commit the fix")
    b.edit("/home/dev/shop/limits.py")
    b.bash("git commit -am \"Fix error path\n\n- Add skip_remote flag to avoid API calls inside the error handler\"",
           "[main 0c1d2e3] Fix error path\n 1 file changed")
    assert any("skip_remote" in w for st, w in _decisions(b))


def test_a_plan_not_acted_on_gives_no_reported_choice():
    b = B()
    b.user("how would you speed up the import?")
    b.asst("I would be:\n\n- Adding a `COPY` based loader to skip the ORM per row\n\nShall I?")
    assert _decisions(b) == []


# --- question tools --------------------------------------------------------------------------------------------
def test_a_gemini_ask_user_answer_in_json_picks_and_rejects():
    b = B()
    b.user("build the grid")
    b.call("ask_user", "Engine",
           'questions: [{"options":[{"label":"Native Scroll Snap","description":"…"},'
           '{"label":"Drag Canvas","description":"…"}],"question":"Which engine?"}]')
    b.result('{"answers":{"0":"Drag Canvas"}}', tool="ask_user")
    got = _decisions(b)
    assert ("APPROVED", "Drag Canvas") in got and ("REJECTED", "Native Scroll Snap") in got


def test_the_harness_answering_for_an_absent_user_is_no_decision():
    b = B()
    b.user("work on the epic")
    b.call("ask_user", "Service down", 'question: "The broker is not running. Start it?"')
    b.result("The user is not available to respond and will review your work later. Work autonomously.", tool="ask_user")
    assert _decisions(b) == []


# --- offers and reports are the speaker's own words ----------------------------------------------------------
@pytest.mark.parametrize(
    "offer, reply, what",
    [
        ("If you want, I can also inline the type table into `SKILL.md`.", "yes please", "inline the type table"),
        ("If you'd like, I can add a `--dry-run` flag to the importer.", "sure, do it", "--dry-run"),
        ("If useful, I can also pin `numpy<2` in requirements.txt.", "ok", "numpy<2"),
    ],
)
def test_an_offer_after_a_report_of_updated_docs_is_approved(offer, reply, what):
    b = B()
    b.user("document the proto types")
    b.edit("/home/dev/shop/docs/proto.md")
    b.asst("Done.\n\n- Updated `docs/readmes/proto.md` with a complete reference:\n  - scalar types\n  - maps\n\n" + offer)
    b.user(reply)
    assert any(st == "APPROVED" and what in w for st, w in _decisions(b))


@pytest.mark.parametrize(
    "sentence",
    [
        "The solution is to either:\n- pin the version\n- vendor it",
        "The fix is to use `lib.mkDefault` or conditionally set the platform.",
        "Let me revert it, but I need to figure out why it didn't work before.",
    ],
)
def test_alternatives_and_self_clauses_are_no_decisions(sentence):
    b = B()
    b.user("fix the config")
    b.asst(sentence)
    assert _decisions(b) == []


def test_module_helpers_agree_with_the_rules():
    b = B()
    b.user("fix")
    b.bash("cat notes.txt", "Permission denied while reading? no")
    s = scan(b.build())
    assert struggle.looks(s, 1)
    assert reports.turns(s) == [(0, len(s.events))]
    assert scope.propose(s) == []


# --- opencode's question tool, several questions per call ---------------------------------------------------------
_QUESTIONS = (
    'questions: [{"question":"Which store should the cache use?","header":"Cache","options":['
    '{"label":"Redis (Recommended for the cluster)","description":"…"},{"label":"Memcached","description":"…"},'
    '{"label":"Decide later","description":"…"}]},'
    '{"question":"Where do the \\"hot\\" keys live?","header":"Keys","options":['
    '{"label":"One prefix per tenant","description":"…"},{"label":"A shared prefix","description":"…"}]}]'
)


@pytest.mark.parametrize("tool", ["question", "AskUserQuestion"])
def test_each_question_of_a_call_keeps_its_own_options(tool):
    b = B()
    b.user("set up the cache")
    b.call(tool, "Cache", _QUESTIONS)
    b.result('User has answered your questions: "Which store should the cache use?"="Memcached", '
             '"Where do the "hot" keys live?"="One prefix per tenant". You can now continue.', tool=tool)
    got = _decisions(b)
    assert ("APPROVED", "Memcached") in got and ("APPROVED", "One prefix per tenant") in got
    # the recommended option the user passed over is turned down; "Decide later" is not
    assert ("REJECTED", "Redis (Recommended for the cluster)") in got and ("REJECTED", "A shared prefix") in got
    assert not [w for st, w in got if "Decide later" in w]


# --- a pasted terminal session is not the user's words -----------------------------------------------------------
@pytest.mark.parametrize(
    "terminal",
    [
        "(base) ➜  infra kubectl rollout restart deploy/api -n edge\n  kubectl get pods -n edge\nWARN[0000] deprecated flag\n",
        "dev@builder:~/svc$ make image TAG=v2.4.1\n  docker push registry.local/svc:v2.4.1\nerror: denied\n",
        "PS C:\\work\\app> dotnet build -c Release\n  Restore complete (0.6s)\n  app failed with 2 error(s)\n",
    ],
)
def test_a_pasted_terminal_before_the_request_is_no_task_or_decision(terminal):
    from pipeline.stages.rules import paste

    own = "Please write the design document for the camera tracking module."
    assert paste.own_words(terminal + own) == own
    b = B()
    b.user(terminal + own)
    b.asst("Two options:\n1. A single detector at 1280\n2. Two detectors, 1280 and 640\n\nWhich one?")
    b.user(terminal + "选 1，两个检测器。")
    t = b.build()
    d = distil.run(t)
    first = terminal.split()[0]
    assert first not in (d.approved_workflow or "")
    assert all(first not in x.reasoning and first not in x.what for x in d.decisions)


# --- options offered in a table, picked by a bare label -----------------------------------------------------------
@pytest.mark.parametrize(
    "question, reply, chosen, passed_over",
    [
        ("**Q1 - Masking policy**\n\n**Recommended:** Option B - fixed levels are testable.\n\n| Option | Description |\n"
         "|---|---|\n| A | Publish every figure unmasked |\n| B | Publish bands only |\n| C | Mask by hand |\n\n"
         "Reply with the option letter.", "A", "Publish every figure unmasked", "Publish bands only"),
        ("**问题 2 - 重试策略**\n\n**Recommended:** Option A - 固定两次。\n\n| Option | Description |\n|---|---|\n"
         "| A | 自动重试 2 次 |\n| B | 不重试 |\n| C | 自动重试 3 次 |\n", "C", "自动重试 3 次", "自动重试 2 次"),
        ("Pick a cache:\n\n| Choice | Store |\n|---|---|\n| 1 | Redis |\n| 2 | Memcached |\n\nWhich one?", "2",
         "Memcached", "Redis"),
    ],
)
def test_a_bare_label_picks_from_a_table_of_options(question, reply, chosen, passed_over):
    b = B()
    b.user("clarify the spec")
    b.asst(question)
    b.user(reply)
    got = _decisions(b)
    assert ("APPROVED", chosen) in got and ("REJECTED", passed_over) in got


@pytest.mark.parametrize(
    "reply",
    ["以下の２つの案からAを採用しました。", "用方案A吧", "A로 가자", "vamos com a A", "prefiero la opción A"],
)
def test_an_option_picked_in_another_language(reply):
    b = B()
    b.user("how should the backend be hosted?")
    b.asst("Two options:\n\nA. Next.js API routes on Vercel\nB. Supabase Edge Functions\n\nWhich do you prefer?")
    b.user(reply)
    got = _decisions(b)
    assert ("APPROVED", "Next.js API routes on Vercel") in got and ("REJECTED", "Supabase Edge Functions") in got


# --- rules the user states, typed as people type -------------------------------------------------------------------
@pytest.mark.parametrize(
    "prompt, rule",
    [
        ("dont add charts to the report, just the table please", "dont add charts to the report"),
        ("QUE TE ASEGURES DE USAR LOS COMPONENTES QUE YA EXISTEN", "QUE TE ASEGURES"),
        ("개발 중에는 목 서버를 사용하지 않고 실제 API에 연결합니다.", "사용하지 않고"),
        ("Gebruik nooit de productie database voor tests.", "nooit"),
        ("não quero dados mockados em nenhuma tela.", "não quero"),
    ],
)
def test_a_rule_the_user_types_is_a_constraint(prompt, rule):
    b = B()
    b.user(prompt)
    b.asst("Understood.")
    assert any(rule in f for f in _facts(b))


def test_the_reason_a_user_typed_when_declining_a_call_is_kept():
    b = B()
    b.user("add the http client")
    b.bash("npm install axios", "")
    b.events[-1].is_error = True
    b.events[-1].text = ("The user doesn't want to proceed with this tool use. The tool use was rejected. "
                         "The user provided the following reason for the rejection:  use pnpm here")
    t = b.build()
    d = distil.run(t)
    assert [(x.status, x.reasoning) for x in d.decisions] == [
        ("REJECTED", 'user declined the tool call: "use pnpm here"')]


# --- how harnesses say a shell call failed -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "output, failed",
    [
        ("Command: pytest -q\nDirectory: (root)\nOutput: 12 passed\nError: (none)\nExit Code: 0", False),  # Gemini CLI
        ("Command: make\nOutput: make: *** [all] Error 2\nError: (none)\nExit Code: 2", True),
        ("npm ERR! missing script: lint\n<exited with exit code 1>", True),  # Copilot CLI
        ("3 files linted\n<exited with exit code 0>", False),
    ],
)
def test_shell_failure_as_each_harness_prints_it(output, failed):
    from pipeline.stages.rules import tools
    from pipeline.transcripts.model import Event

    assert tools.failed(Event(index=0, kind="tool_result", text=output)) is failed


# --- a measurement against its baseline; a finding's paragraph going on --------------------------------------------
@pytest.mark.parametrize(
    "command, output, reading, term",
    [
        ("/usr/bin/time -v ./bin/import --all", "\tMaximum resident set size (kbytes): 48213",
         "Resident memory is 48 MB now, down from 2.3 GB before streaming.", "48 MB"),
        ("hyperfine 'node build.js'", "Time (mean ± σ):      3.214 s ±  0.051 s",
         "构建耗时 3.2 s，之前是 11 s。", "3.2 s"),
        ("wrk -t4 -c64 -d30s http://localhost:8080/search", "Requests/sec:   1873.44",
         "검색은 이제 1873 req/s를 처리합니다 (이전 410 req/s).", "1873"),
    ],
)
def test_a_measurement_against_its_baseline_is_a_fact(command, output, reading, term):
    b = B()
    b.user("make the import use less memory")
    b.bash(command, output)
    b.asst(reading + " Next the report.")
    b.edit("/home/dev/app/report.py")
    assert any(term in f for f in _facts(b))


def test_a_single_number_read_off_a_result_is_no_measurement():
    b = B()
    b.user("check the import")
    b.bash("wc -l data/rows.csv", "120000 data/rows.csv")
    b.asst("The file has 120000 rows. Next the report.")
    b.edit("/home/dev/app/report.py")
    assert not any("120000" in f for f in _facts(b))


@pytest.mark.parametrize("second, kept", [
    ("The refund test builds a partial refund in `EUR` from that file and looks the rate up by key.", True),
    ("It might also break the partial refund in `EUR` for the nightly export.", False),  # a guess
    ("Der Refund-Test baut eine Teilerstattung in `EUR` aus dieser Datei.", True),
])
def test_the_next_sentence_of_a_finding_goes_with_it_unless_it_guesses(second, kept):
    b = B()
    b.user("why do the refund numbers look off?")
    b.bash("git log -p -1 -- fixtures/rates.json", "commit 9f2c1e0\n-EUR,0.92\n USD,1.00")  # an ordinary result
    b.asst("The last commit dropped the EUR row from fixtures/rates.json because the cleanup keeps only currencies "
           "seen this month. " + second + "\n\nI'll restore the row.")
    b.edit("/home/dev/shop/fixtures/rates.json")
    facts = _facts(b)
    assert any("dropped the EUR row" in f for f in facts)
    assert any("partial refund in `EUR`" in f or "Teilerstattung" in f for f in facts) is kept


# --- a sub-agent's report of its own work, clean checks, verdicts: Done, not findings ------------------------------
@pytest.mark.parametrize(
    "line, kept",
    [
        ("- Rewrote the retry loop in `worker/queue.go` to use the shared backoff helper", False),  # its own work
        ("- Migrated the cron entries to `deploy/schedule.yaml` with the same timings", False),
        ("- No dangling references detected", False),  # a clean check
        ("- `4be91c2` — `Billing // Invoices // Round totals once`", False),  # a commit by hash
        ("The migration layer is solid and production-ready for the next release.", False),  # a verdict
        ("- Renamed `OLD_TOKEN` in `config/env.ts` but the CI secret still uses the old name", True),  # work + a limit
        ("- `worker/queue.go:88` retries forever because the backoff cap is never read", True),  # a finding
    ],
)
def test_a_subagents_report_of_its_own_work_is_no_finding(line, kept):
    b = B()
    b.user("clean up the worker's retries")
    report = ("## Summary of changes\n\n" + line + "\n- Worker builds with `go build ./...` (exit 0)\n"
              "- Queue depth metric is exported as `queue_depth` on :9102\n")
    b.subagent("clean up retries", report, agent="general-purpose")
    b.asst("The sub-agent finished the clean-up.")
    facts = _facts(b)
    probe = line.split("`")[1] if "`" in line else line.split()[-1]
    assert any(probe in f for f in facts) is kept, facts


@pytest.mark.parametrize(
    "command, output",
    [
        ("git commit -am 'tidy imports'", "On branch main\nnothing to commit, working tree clean"),
        ("git commit -m 'docs'", "On branch feat/x\nno changes added to commit (use \"git add\" and/or \"git commit -a\")"),
    ],
)
def test_a_commit_with_nothing_to_commit_is_no_trap(command, output):
    b = B()
    b.user("commit the import clean-up")
    b.bash(command, "Exit code 1\n" + output, error=True)
    b.bash("git log -1 --oneline", "a1b2c3d tidy imports")
    b.asst("The change was already committed as a1b2c3d.")
    assert not any("nothing to commit" in f or "no changes added" in f for f in _facts(b))


@pytest.mark.parametrize("guess", [
    "The problem might be that `messages.h` is included after the macro expands.",
    "The cause may be the stale `build/` folder from the old toolchain.",
])
def test_a_guessed_cause_is_no_finding(guess):
    b = B()
    b.user("why does the firmware build fail?")
    b.bash("make fw", "Exit code 2\nsrc/app.c:41: error: 'DEVICE_CFG' undeclared", error=True)
    b.asst(guess + " Let me check.")
    b.read("/home/dev/fw/src/app.c")
    assert not any(guess.split("`")[1] in f for f in _facts(b))


@pytest.mark.parametrize("claim", [
    "The deploy is working again, and the cron job should now pick up `jobs/nightly.yaml` on its own.",
    "I have already committed and pushed the changes to the `release/2.4` branch.",
    "Since we ran `make install` earlier, your copy should already be updated.",
])
def test_a_status_claim_is_no_fact(claim):
    b = B()
    b.user("is the nightly job fixed?")
    b.bash("systemctl status nightly", "Exit code 3\nnightly.service: Failed with result 'exit-code'", error=True)
    b.asst(claim)
    code = claim.split("`")[1]
    assert not any(code in f for f in _facts(b))


def test_a_read_whose_output_names_no_error_is_no_trial():
    b = B()
    b.user("look at the model code")
    b.bash("cat src/model.py && echo --- && cat src/train.py",
           "Exit code 1\nimport torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n",
           error=True)
    b.asst("The model only doubles its input.")
    assert not any("cat src/model.py" in f for f in _facts(b))


@pytest.mark.parametrize("sentence", [
    "Instead of patching the lockfile by hand, I'm thinking of regenerating it with `pnpm install`.",
    "Given the failing `db:seed`, I'll reset the database first.",
])
def test_a_plan_after_a_leading_clause_is_narration(sentence):
    b = B()
    b.user("fix the install")
    b.bash("pnpm install --frozen-lockfile", "Exit code 1\nERR_PNPM_OUTDATED_LOCKFILE  Cannot install with frozen-lockfile",
           error=True)
    b.asst(sentence)
    b.bash("pnpm install", "Done in 4.1s")
    assert not any(sentence[:30] in f for f in _facts(b))


def test_a_bare_label_answering_several_questions_at_once_picks_nothing():
    b = B()
    b.user("write the spec for the export API")
    b.asst("## Question 1: Page size\n\n| Option | Answer |\n|---|---|\n| A | 100 rows |\n| B | 1,000 rows |\n\n"
           "## Question 2: File format\n\n| Option | Answer |\n|---|---|\n| A | CSV only |\n| B | CSV and Parquet |\n\n"
           "Reply like `Q1: A, Q2: B`.")
    b.user("B")
    assert _decisions(b) == []


@pytest.mark.parametrize("sentence", [
    "The `terraform apply` step failed because the state lock is held by another run.",
    "The `pnpm publish` command failed because the registry token has expired.",
])
def test_a_named_run_that_failed_is_no_rejected_option(sentence):
    b = B()
    b.user("ship it")
    b.bash("make release", "Exit code 2\nError: release failed", error=True)
    b.asst(sentence)
    assert not any(status == "REJECTED" for status, _ in _decisions(b))


# --- the agent's own prose rejection: an option considered, then turned down with its reason ----------------------
@pytest.mark.parametrize(
    "sentence, option, reason",
    [
        ("I considered polling every second until the 429 clears, but rejected it: the API counts every poll "
         "against the quota.", "polling every second", "counts every poll"),
        ("We looked at a shared Redis lock, but ruled it out because the job runs on a single host.",
         "shared Redis lock", "single host"),
        ("I thought about vendoring `left-pad`, but decided against it since the lockfile already pins it.",
         "vendoring `left-pad`", "lockfile"),
        ("Consideré reintentar cada segundo, pero lo descarté porque la API cuenta cada intento contra la cuota.",
         "reintentar cada segundo", "cuota"),
        ("Considerei usar um lock no Redis, mas descartei porque o job roda em um único host.", "lock no Redis", "host"),
        ("我考虑过用轮询，但放弃了，因为每次请求都会计入配额。", "轮询", "配额"),
        ("폴링도 고려했지만 요청마다 할당량이 차감되기 때문에 제외했습니다.", "폴링", "할당량"),
        ("ポーリングも検討しましたが、毎回クォータを消費するため見送りました。", "ポーリング", "クォータ"),
    ],
)
def test_an_option_the_agent_considered_and_turned_down_is_rejected_with_its_reason(sentence, option, reason):
    b = B()
    b.user("the sync job keeps hitting 429s, fix it")
    b.asst(sentence)
    b.edit("/home/dev/app/sync.py")
    t = b.build()
    got = [(d.status, d.what, d.reasoning) for d in distil.run(t).decisions]
    assert any(s == "REJECTED" and option in w and reason in r for s, w, r in got), got


@pytest.mark.parametrize("sentence", [
    "I looked at the logs, but nothing stands out.",  # no option turned down
    "I considered the retry budget and it holds.",
    "我们放弃了，因为时间不够。",  # a bare particle is no option
])
def test_looking_at_something_is_no_rejected_option(sentence):
    b = B()
    b.user("why does the sync job fail?")
    b.asst(sentence)
    assert not any(status == "REJECTED" for status, _ in _decisions(b))


def test_a_search_whose_matches_hold_an_error_line_is_no_trial():
    b = B()
    b.user("where does the loader reject a skeleton?")
    b.bash("rg -n 'raise ValueError|skeleton' src/",
           "Exit code 2\nsrc/rep.py:101:    raise ValueError(f'No skeleton for nbjoints={n}')\nsrc/rep.py:7:# skeleton table",
           error=True)
    b.asst("The loader raises in `src/rep.py` line 101 when the joint count is unknown.")
    assert not any("rg -n" in f for f in _facts(b))


@pytest.mark.parametrize("guess, kept", [
    ("It feels like there might be a caching issue with `sharp` in the dev server.", False),
    ("Perhaps `pnpm dedupe` would shrink the lockfile further.", False),
    ("The generated `nginx.conf` has the `gzip on` line commented out, which suggests the template ran but might be stale.",
     True),  # the observation stands; the guess is only its tail
])
def test_a_guess_in_the_first_clause_is_no_fact(guess, kept):
    b = B()
    b.user("why is the site slow in dev?")
    b.bash("curl -sI localhost:3000/_next/image", "Exit code 22\ncurl: (22) The requested URL returned error: 500", error=True)
    b.asst(guess)
    b.read("/home/dev/site/next.config.js")
    b.edit("/home/dev/site/next.config.js")
    code = guess.split("`")[1]
    assert any(code in f for f in _facts(b)) is kept


@pytest.mark.parametrize("second, kept", [
    ("The seed step writes `orders_tmp` with a 30 s TTL and the next query reads it after expiry.", True),
    ("The quickest fix is `orders_tmp` with a longer TTL in the seed script.", False),  # a remedy proposed
    ("解决方法是延长 `orders_tmp` 的 TTL。", False),
])
def test_a_diagnosis_goes_on_with_its_mechanism_not_with_the_remedy(second, kept):
    """The diagnosis need not quote the result (here no word of it does); the sentence after it does."""
    b = B()
    b.user("why do the report tests flake?")
    b.bash("redis-cli ttl orders_tmp", "(integer) 30")  # an ordinary result
    b.asst("Root cause: the report suite runs after the seed suite because pytest orders the folders by name. "
           + second + "\n\nShall I change it?")
    assert any("orders_tmp" in f for f in _facts(b)) is kept


def test_one_digit_is_no_measurement_read_off_a_result():
    b = B()
    b.user("check the cache")
    b.bash("redis-cli info memory | head -3", "# Memory\nused_memory:2097152\nused_memory_human:2.00M")
    b.asst("Latency is 2 ms here and 9 ms on staging. Next the eviction policy.")
    b.edit("/home/dev/app/cache.py")
    assert not any("Latency is 2 ms" in f for f in _facts(b))


@pytest.mark.parametrize("answer", ["Claude AI usage limit reached|1754528400", "5-hour usage limit reached. Resets at 3pm."])
def test_a_subagent_answered_by_the_harness_limit_found_nothing(answer):
    b = B()
    b.user("review the webhook handler")
    b.subagent("review webhooks", answer, agent="code-reviewer")
    b.asst("The reviewer could not run; I'll review it myself.")
    assert not any("usage limit" in f for f in _facts(b))
