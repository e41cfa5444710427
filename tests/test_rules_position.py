"""Position (Current / Done / Remaining) of the rules engine (pipeline.stages.rules.position)."""

from __future__ import annotations

from pipeline.stages import distil
from pipeline.stages.rules.remaining import open_items_in
from rules_builder import B


def position(b: B):
    p = distil.run(b.build()).position
    return p.current, p.done, p.remaining


def test_current_is_the_in_progress_todo_and_remaining_keeps_todo_order():
    b = B()
    b.user("Add rate limiting to the checkout API.")
    b.todos(("Explore the checkout API", "completed"), ("Implement the token bucket", "in_progress"),
            ("Add tests for the limiter", "pending"), ("Document RATE_LIMIT_* settings", "pending"))
    current, done, remaining = position(b)
    assert current == "Implement the token bucket"
    assert remaining == ["Add tests for the limiter", "Document RATE_LIMIT_* settings"]
    assert done == ["Explore the checkout API"]


def test_latest_todo_list_wins_even_before_a_compaction():
    b = B()
    b.user("Add rate limiting.")
    b.todos(("Explore", "in_progress"), ("Implement", "pending"))
    b.todos(("Explore", "completed"), ("Implement", "completed"), ("Fix review findings", "in_progress"),
            ("Open a PR against main", "pending"))
    b.compaction("This session is being continued from a previous conversation. Next steps: deploy to prod.")
    b.asst("Next steps:\n- deploy to prod\n- tell the partner team")
    b.asst("Let me re-read the review comments.")
    current, done, remaining = position(b)
    assert current == "Fix review findings"
    assert remaining == ["Open a PR against main"]
    assert done == ["Explore", "Implement"]


def test_current_from_the_last_assistant_message_without_todos():
    b = B()
    b.user("Fix the flaky session test.")
    b.asst("I reproduced the flake. Now I'll move the fake timers into beforeEach. Then I run the suite 200 times.")
    b.read("tests/session.test.ts")
    current, _, _ = position(b)
    assert current == "Fix the flaky session test. — Now I'll move the fake timers into beforeEach."


def test_current_is_the_unanswered_last_request():
    b = B()
    b.user("Fix the flaky session test.")
    b.asst("Let me look at the test.")
    b.user("also check the other tests that call vi.useFakeTimers() late")
    b.read("tests/session.test.ts")
    current, _, _ = position(b)
    assert current == "Answer the user's last request: also check the other tests that call vi.useFakeTimers() late"


def test_done_is_bounded_to_15_newest_last_and_not_every_tool_call():
    b = B()
    b.user("Port the utils to Rust.")
    for n in range(20):
        b.read(f"src/util_{n}.py")
        b.edit(f"src/util_{n}.rs", tool="Write")
        b.bash(f"cargo test util_{n}", "test result: ok. 3 passed; 0 failed")
        b.asst(f"util_{n} is ported.")
    _, done, _ = position(b)
    assert len(done) == 15
    assert done[-1] == "Ran `cargo test util_19` (passed)"
    assert done[-2] == "Created src/util_19.rs"
    assert not any("Read" in d or "util_0" in d for d in done)


def test_done_summarises_edits_tests_and_commits():
    b = B(cwd="/home/dev/shop")
    b.user("Add rate limiting.")
    b.edit("/home/dev/shop/src/shop/ratelimit.py", tool="Write")
    b.edit("/home/dev/shop/src/shop/api/checkout.py")
    b.edit("/home/dev/shop/src/shop/api/checkout.py")
    b.edit("/home/dev/shop/src/shop/api/refunds.py", error=True)  # failed edit: not done
    b.bash("python -m pytest -q tests/api", "2 failed, 40 passed", error=True)
    b.edit("/home/dev/shop/tests/conftest.py")
    b.bash("python -m pytest -q tests/api", "42 passed in 3.1s")
    b.bash("ruff check src", "Found 1 error.", error=True)
    b.bash('git commit -m "Add token bucket limiter to checkout"', "[feature/rate-limit 1a2b3c4] Add token bucket")
    b.bash("git push origin feature/rate-limit", "To github.com:dev/shop.git")
    _, done, _ = position(b)
    assert done == [
        "Edited src/shop/api/checkout.py; created src/shop/ratelimit.py",
        "Edited tests/conftest.py",
        "Ran `python -m pytest -q tests/api` (passed)",
        'Committed 1a2b3c4 "Add token bucket limiter to checkout"',
        "Pushed origin feature/rate-limit",
    ]


def test_remaining_from_assistant_next_steps_without_a_todo_list():
    b = B()
    b.user("Paginate GET /notes.")
    b.asst(
        "The endpoint now pages with a cursor.\n\n**Next steps:**\n1. Update the OpenAPI spec for GET /notes\n"
        "2. Load-test with the 20000-note fixture account\n\n```bash\nnpm run loadtest\n```"
    )
    _, _, remaining = position(b)
    assert remaining == ["Update the OpenAPI spec for GET /notes", "Load-test with the 20000-note fixture account"]


def test_open_items_inline_and_todo_markers():
    assert open_items_in("Remaining: update the docs; open a PR") == ["update the docs", "open a PR"]
    assert open_items_in("Done with the parser.\nTODO: handle the EU date format") == ["handle the EU date format"]
    assert open_items_in("All good, nothing pending here.") == []


def test_status_list_stands_in_for_a_todo_list():
    b = B()
    b.user("Make the export stream rows.")
    b.asst(
        "Status:\n\n- done: export_rows() is a generator\n- done: tests pass\n"
        "- in progress: Add a CHANGELOG entry\n- next: Profile the nightly job\n- next: Open a PR"
    )
    current, done, remaining = position(b)
    assert current == "Add a CHANGELOG entry"
    assert done == ["export_rows() is a generator", "tests pass"]
    assert remaining == ["Profile the nightly job", "Open a PR"]


def test_todo_status_spellings_are_normalized():
    b = B()
    b.user("x")
    b.todos(("Write the parser", "done"), ("Wire the CLI", "in-progress"), ("Ship", "todo"))
    current, done, remaining = position(b)
    assert (current, done, remaining) == ("Wire the CLI", ["Write the parser"], ["Ship"])
