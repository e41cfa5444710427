"""Position.Current from the shape of the session's end (pipeline.stages.rules.current; issue 12, 2.3)."""

from __future__ import annotations

import pytest

from pipeline.stages import distil
from rules_builder import B


def current(b: B) -> str | None:
    return distil.run(b.build()).position.current


@pytest.mark.parametrize("final, question", [
    ("Would you like me to set up npm link for a local test?", None),
    ("Shall I open the PR against the release branch?", None),
    ("Which approach would you prefer? The single commit is cleaner.", "Which approach would you prefer?"),
    ("Does your dotfiles repo have a specific structure? I can help adapt it.",
     "Does your dotfiles repo have a specific structure?"),
    ("Você quer que eu configure o deploy no Railway?", None),
    ("要不要我先把迁移脚本跑一遍？", None),
])
def test_a_final_question_is_where_the_work_waits(final, question):
    b = B()
    b.user("prepare the 2.0 release of the cli")
    b.asst("I checked the changelog and the version bump.")
    b.asst("Everything is ready. " + final)
    assert current(b) == "prepare the 2.0 release of the cli — waiting for the user: " + (question or final)


def test_the_question_is_about_the_todo_item_touched_last():
    b = B()
    b.user("/ai-commit")
    b.todos(("Analyze the diffs", "completed"), ("Create commit plan and present to user", "completed"),
            ("Execute commits if approved", "pending"))
    b.asst("## Proposed plan\n\nOne STYLE commit for all 48 files. Which approach would you prefer?")
    assert current(b) == ("Create commit plan and present to user — waiting for the user: "
                          "Which approach would you prefer?")


@pytest.mark.parametrize("final, expected", [
    ("`mark_paid()` writes the event to the outbox. Next: the relay process.", "the relay process"),
    ("The schema is migrated. Next up: the retry budget for the importer.", "the retry budget for the importer"),
    ("Tests are green. Wiring the exporter into the scheduler next.", "Wiring the exporter into the scheduler next"),
    ("Build passes. Now I'll run the migration dry-run against the fixture db.",
     "Now I'll run the migration dry-run against the fixture db."),
])
def test_a_stated_next_step_in_the_final_message(final, expected):
    b = B()
    b.user("add the outbox for order events")
    b.asst("I'll start with the model.")  # a stale plan from before: never Current
    b.asst(final)
    step = expected if expected.startswith("Now") else expected.rstrip(".")
    assert current(b) == "add the outbox for order events — " + step


@pytest.mark.parametrize("block", [
    "```bash\nrsync -avz --progress dev@build-box:/srv/results/ ~/results/\n```",
    "```sh\n$ scp build-box:/srv/out.tar.gz .\n```",
    "```\nkubectl rollout restart deploy/api -n staging\n```",
])
def test_commands_handed_to_the_user(block):
    b = B()
    b.user("sync the outputs to my laptop")
    b.asst("Run this on your local machine:\n\n" + block + "\n\nYou'll be asked for your SSH password.")
    cmd = block.split("\n")[1].lstrip("$ ").strip()
    assert current(b) == f"sync the outputs to my laptop: the user runs `{cmd}`"


def test_a_finished_answer_and_a_structured_verdict():
    b = B()
    b.user("port the utils to rust")
    b.asst("The project is ported. All 5 modules pass their tests and the changes are committed.")
    assert current(b) == ("port the utils to rust — finished: The project is ported. All 5 modules pass their tests "
                          "and the changes are committed.")
    b = B()
    b.user("review the diff against main")
    b.asst('{"findings": [], "overall_correctness": "patch is incorrect", "overall_explanation": "empty streams 500"}')
    assert current(b) == "review the diff against main — finished: patch is incorrect; empty streams 500"


@pytest.mark.parametrize("prompts, expected", [
    (["the deploy fails, look:\n[12:00:01] INFO build\n[12:00:02] INFO deps\n✖ could not determine how to build"
      "\nPhp\nGo\nJava\nRust\nNode\nPython\nRuby\nShell", "oi"],
     "Answer the user's last request: the deploy fails, look: Pasted output: ✖ could not determine how to build"),
    (["why is the cache cold after every deploy?"], "Answer the user's last request: why is the cache cold after every deploy?"),
    (["为什么每次部署后缓存都是冷的？", "你好"], "Answer the user's last request: 为什么每次部署后缓存都是冷的？"),
])
def test_an_unanswered_request_skips_greetings_and_reduces_pastes(prompts, expected):
    b = B()
    b.user("deploy the api")
    b.asst("Deployed to staging.")
    for p in prompts:
        b.user(p)
    assert current(b) == expected


def test_mid_run_uses_the_last_doing_sentence_else_the_call_description():
    b = B()
    b.user("fix the flaky test")
    b.asst("Let me rerun the suite with -p no:randomly to confirm.")
    b.call("Bash", "pytest -q -p no:randomly", text="command: pytest -q -p no:randomly description: Rerun without random order")
    assert current(b) == ("fix the flaky test — Let me rerun the suite with -p no:randomly to confirm; "
                          "`pytest -q -p no:randomly` still running")
    b = B()
    b.user("fix the flaky test")
    b.asst("Looking at it.")
    b.call("Bash", "pytest -q", text="command: pytest -q description: Run the suite once")
    assert current(b) == "fix the flaky test — Run the suite once; `pytest -q` still running"
    # a request answered only by a command that changes something is answered; reading is still answering
    b = B()
    b.user("commit it")
    b.call("Bash", "git commit -am wip", text="command: git commit -am wip description: Commit the work")
    assert current(b) == "commit it — Commit the work; `git commit -am wip` still running"
    b = B()
    b.user("check the other tests too")
    b.call("Read", "tests/other.test.ts")
    assert current(b) == "Answer the user's last request: check the other tests too"


def test_no_request_no_step():
    for greeting in ["How can I help you today?", "Olá! Em que posso ajudar?", "今天需要我帮你做什么？"]:
        b = B()
        b.asst(greeting)
        assert current(b) is None, greeting
