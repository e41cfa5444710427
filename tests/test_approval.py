"""DESIGN.md "Approval": which answers approve a previewed write."""

import pytest

from pipeline.approval import ask, is_approval


@pytest.mark.parametrize(
    "answer",
    ["yes", "Yes", "YES!", "y", "Y", "y.", " Y ", "approve", "approved", "ok", "OK.", "okay", "go ahead", "Go ahead.", "confirm",
     "yes, write it", "looks good, go ahead", "lgtm", "I approve", "sure, do it"],
)
def test_approving_answers(answer):
    assert is_approval(answer) is True


@pytest.mark.parametrize(
    "answer",
    ["continue", "next", "Next.", "a", "b", "B", "2", "", "   ", "no", "No, not yet", "not yet", "don't",
     "yes but wait", "hold on", "cancel", "maybe", "what is this?", "n", "N", "x", "z", "yy"],
)
def test_non_approving_answers(answer):
    assert is_approval(answer) is False


def test_ask_reads_once_and_judges():
    questions = []

    def fake_read(q):
        questions.append(q)
        return "go ahead"

    assert ask("Write x?", read=fake_read) is True
    assert questions == ["Write x? [y/N] "]  # the prompt offers y, so y approves (issue 24)


def test_ask_eof_is_declined():
    def eof(_):
        raise EOFError

    assert ask("Write x?", read=eof) is False


@pytest.mark.parametrize("answer", ["I cannot approve this", "can't approve", "Approved?", "approve it? nah",
                                    "nah, go ahead later", "won't approve"])
def test_refusals_and_questions_are_not_approval(answer):
    """Bug: these refusals were taken as approval (the review found 'I cannot approve this' wrote the file)."""
    assert is_approval(answer) is False
