"""The header's Repo/Branch names a git remote as owner/name (trial input: a Codex rollout's repository_url showed
up whole, credentials and all, with a full-width ＠)."""

from __future__ import annotations

import pytest

from pipeline.stages.weave import repo_name


@pytest.mark.parametrize("remote,name", [
    ("https://dev@example.com/dev/local-voice-assistant-codex.git", "dev/local-voice-assistant-codex"),
    ("git@github.com:owner/name.git", "owner/name"),
    ("ssh://git@host:22/owner/name", "owner/name"),
    ("https://x:token@gitlab.com/group/sub/project.git", "sub/project"),
    ("https://github.com/a/b/", "a/b"),
    ("XEFF09/dotfiles", "XEFF09/dotfiles"),
    ("shop", "shop"),
])
def test_a_remote_is_named_by_its_owner_and_name(remote, name):
    assert repo_name(remote) == name
