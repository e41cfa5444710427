"""Issue 24, item 2: every install line in the README, the docs and the Claude Code plugin works as written from
this repository: it names a path or a git URL, never a package name an index would have to serve
(`pip install 'duck-tape-pipeline[mcp]'` named one no index serves, left open to squatting)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "commands").glob("*.md")),
         *sorted((ROOT / "hooks").iterdir()), *sorted((ROOT / ".claude-plugin").iterdir())]
INSTALL = re.compile(r"\b(?:pipx|pip|uv pip|uvx)\s+(?:install|inject)\b[^`\n]*")


def _specs(line: str) -> list[str]:
    words = [w.strip("'\"") for w in re.findall(r"'[^']*'?|\"[^\"]*\"?|[^\s`]+", line)]
    start = next(i for i, w in enumerate(words) if w in ("install", "inject")) + 1
    return [w for w in words[start:start + 3] if not w.startswith("-")][:1]


def test_every_install_line_names_a_path_or_a_git_url():
    found = []
    for path in FILES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in INSTALL.finditer(line):
                for spec in _specs(match.group(0)):
                    found.append((path.name, number, spec))
                    assert spec.startswith(("./", "/", "${", "git+")), f"{path}:{number}: {spec!r} from an index"
    assert len(found) >= 4, found  # the Quickstart, the llm extra (README and docs), the plugin's fallback
