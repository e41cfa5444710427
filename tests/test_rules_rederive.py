"""Re-derivation of the rules engine (pipeline.stages.rules.rederive) and command classification (tools)."""

from __future__ import annotations

import pytest

from pipeline.stages import distil
from pipeline.stages.rules import tools
from rules_builder import PATH, B


def test_transcript_files_and_commands():
    b = B(cwd="/home/dev/shop")
    b.user("Add rate limiting.")
    b.read("/home/dev/shop/src/shop/api/checkout.py")  # read only: not listed
    b.edit("/home/dev/shop/src/shop/ratelimit.py", tool="Write")
    b.edit("/home/dev/shop/src/shop/api/checkout.py")
    b.bash("git status --short", " M src/shop/api/checkout.py")  # not a test/build command
    b.bash("REDIS_URL=redis://localhost:6380/15 python -m pytest -q tests/api", "42 passed")
    b.bash("ruff check src tests", "All checks passed!")
    b.edit("/home/dev/shop/src/shop/ratelimit.py")  # edited again: moves last
    b.bash("REDIS_URL=redis://localhost:6380/15 python -m pytest -q tests/api", "42 passed")  # again: moves last
    b.call("apply_patch", "docs/configuration.md", "*** Begin Patch\n*** Update File: docs/configuration.md\n@@\n+x\n*** Add File: docs/limits.md\n+y\n*** End Patch")
    b.result("Done")
    assert distil.run(b.build()).rederivation == [
        f"Read the transcript: {PATH}",
        "Read: src/shop/api/checkout.py",
        "Read: src/shop/ratelimit.py",
        "Read: docs/configuration.md",
        "Read: docs/limits.md",
        "Run: ruff check src tests",
        "Run: REDIS_URL=redis://localhost:6380/15 python -m pytest -q tests/api",
    ]


def test_bounds_keep_the_most_recent():
    b = B()
    b.user("Port it.")
    for n in range(20):
        b.edit(f"/home/dev/shop/src/m{n}.rs", tool="Write")
        b.bash(f"cargo test m{n}", "ok")
    lines = distil.run(b.build()).rederivation
    reads = [x for x in lines if x.startswith("Read: ")]
    runs = [x for x in lines if x.startswith("Run: ")]
    assert reads == [f"Read: src/m{n}.rs" for n in range(5, 20)]
    assert runs == [f"Run: cargo test m{n}" for n in range(10, 20)]


def test_long_compound_command_is_reduced_to_its_test_part():
    cmd = 'echo "=== running the suite for the integration agent, please wait ===" && cd /home/dev/shop && npm test -- --runInBand && echo done'
    b = B()
    b.user("Test it.")
    b.bash(cmd, "Tests: 12 passed")
    assert distil.run(b.build()).rederivation[-1] == "Run: npm test -- --runInBand"


@pytest.mark.parametrize(
    "cmd,kind,segment",
    [
        ("pytest -q tests/api", "test", "pytest -q tests/api"),
        ("uv run pytest -x", "test", "uv run pytest -x"),
        (".venv/bin/python -m pytest -q", "test", ".venv/bin/python -m pytest -q"),
        ("cd web && npm run test", "test", "npm run test"),
        ("go test ./...", "test", "go test ./..."),
        ("cargo clippy -- -D warnings", "lint", "cargo clippy -- -D warnings"),
        ("mypy pipeline", "lint", "mypy pipeline"),
        ("make", "build", "make"),
        ("docker compose up -d db", "build", "docker compose up -d db"),
        ("npx tsc --noEmit", "lint", "npx tsc --noEmit"),
        ("python scripts/seed.py --small", "run", "python scripts/seed.py --small"),
        ("(cd sub && npm test 2>&1)", "test", "npm test 2>&1"),
        ("ls -la src", None, None),
        ("git log --oneline -5", None, None),
        ('python -c "import shop"', None, None),
    ],
)
def test_command_kind(cmd, kind, segment):
    got = tools.command_kind(cmd)
    assert (got[0], got[1]) == (kind, segment) if kind else got is None


def test_commit_message_from_a_heredoc():
    cmd = "git add -A && git commit -m \"$(cat <<'EOF'\nPort the utils to Rust\n\nLonger body.\nEOF\n)\""
    assert tools.commit_message(" ".join(cmd.split()), cmd) == "Port the utils to Rust"
    assert tools.commit_message('git commit -am "fix: flush db 15 between tests"') == "fix: flush db 15 between tests"
    assert tools.commit_message("git status") is None


def test_failure_signals():
    b = B()
    b.bash("pytest", "2 failed, 40 passed in 3.2s")
    b.bash("pytest", "42 passed in 3.1s\n<exited with exit code 0>")
    b.bash("cargo build", "Process exited with code 101")
    t = b.build()
    assert [tools.failed(t.events[i]) for i in (1, 3, 5)] == [True, False, True]
    assert tools.failed(None) is True
