"""Decision Log precision (issue 13 §3, §4): sentences that look like choices but are none, restatements that
collapse, and two dialogue shapes that are choices although no cue word says so.  Invented sentences in several
domains and languages.
"""

from __future__ import annotations

import pytest

from test_rules_decisions import decisions_of, rows
from rules_builder import B


# --- an agent's inability is never a choice (nor a rejection) ------------------------------------------------
@pytest.mark.parametrize(
    "sentence",
    [
        "I am unable to proceed with the schema migration because the credentials file is missing.",
        "I cannot go ahead with the release since the signing key is not in the keychain.",
        "I can't switch to the new SDK because the lockfile is read-only.",
        "We're not able to move to Postgres because the host only runs MySQL 5.7.",
        "Não consigo usar o Postgres em vez do SQLite porque o container não tem rede.",
        "无法用 Postgres 代替 SQLite，因为容器没有网络。",
        "Redis 대신 Postgres를 사용할 수 없습니다.",
        "SQLiteではなくPostgresを使うことができません。",
        "No puedo usar Redis en lugar de Memcached: el puerto está bloqueado.",
    ],
)
def test_agent_inability_is_no_decision(sentence):
    b = B()
    b.user("Ship the billing fix.")
    b.asst(f"I checked the environment. {sentence}")
    assert decisions_of(b) == []


def test_user_inability_turns_the_option_down():
    b = B()
    b.user("Ship the billing fix.")
    b.asst("I'll prepare the deploy.")
    b.user("We cannot go with Kafka because ops only supports RabbitMQ.")
    assert [(d.status, d.what) for d in decisions_of(b)] == [("REJECTED", "Kafka")]


@pytest.mark.parametrize(
    "sentence, approved",
    [
        ("Vamos usar Postgres em vez de SQLite porque não consigo rodar o SQLite aqui.", "Postgres"),
        ("Redis 대신 Postgres를 사용하겠습니다.", "Postgres"),
        ("用 Postgres 代替 SQLite，因为容器没有网络。", "Postgres"),
    ],
)
def test_inability_in_the_reason_keeps_the_choice(sentence, approved):
    b = B()
    b.user("Ship the billing fix.")
    b.asst(sentence)
    got = [(d.status, d.what) for d in decisions_of(b)]
    assert got[0] == ("APPROVED", approved)


# --- "proceed with <the work in hand>" narrates the task ------------------------------------------------------
@pytest.mark.parametrize(
    "sentence",
    [
        "I will proceed with the Docker operations from the `infra` directory.",
        "Now we'll go ahead with the remaining steps from the checklist.",
        "We're moving forward with the deployment tasks on the staging cluster.",
        "I'll proceed with the requested changes in the billing module.",
    ],
)
def test_proceeding_with_the_task_is_no_decision(sentence):
    b = B()
    b.user("Deploy the billing service to staging.")
    b.asst(sentence)
    assert decisions_of(b) == []


@pytest.mark.parametrize(
    "sentence, what",
    [
        ("We'll proceed with the token-bucket limiter since it handles bursts.", "the token-bucket limiter"),
        ("We'll proceed with the Redis implementation because it is shared across pods.", "the Redis implementation"),
        ("Let's move forward with Caddy over nginx because it renews certificates itself.", "Caddy"),
    ],
)
def test_proceeding_with_a_named_option_is_a_decision(sentence, what):
    b = B()
    b.user("Pick a limiter.")
    b.asst(sentence)
    assert rows(decisions_of(b))[0][:2] == ("APPROVED", what)


# --- "shall I start?" answered yes is a go-ahead, not a decision ----------------------------------------------
@pytest.mark.parametrize(
    "question, reply",
    [
        ("Shall I start building the CSV importer?", "yes"),
        ("Quer que eu comece a escrever o módulo de relatórios?", "sim"),
        ("¿Quieres que empiece a escribir los tests de integración?", "sí"),
        ("要我开始写导入脚本吗？", "好的"),
        ("바로 구현을 시작할까요?", "네"),
        ("実装を始めましょうか？", "はい"),
    ],
)
def test_yes_to_starting_the_work_is_no_decision(question, reply):
    b = B()
    b.user("We need a CSV importer for the orders table.")
    b.asst(f"I read the schema and the sample files. {question}")
    b.user(reply)
    assert decisions_of(b) == []


@pytest.mark.parametrize(
    "question, what",
    [
        ("Shall I start using Redis instead of Memcached for sessions?", "start using Redis instead of Memcached for sessions"),
        ("Shall I add a retry wrapper around the upload?", "add a retry wrapper around the upload"),
        ("Quer que eu comece a migrar os pedidos para o Postgres?", "comece a migrar os pedidos para o Postgres"),
    ],
)
def test_yes_to_a_proposal_naming_a_choice_is_approved(question, what):
    b = B()
    b.user("Look at the session store.")
    b.asst(f"I read the code. {question}")
    b.user("yes")
    assert [(d.status, d.what) for d in decisions_of(b)] == [("APPROVED", what)]


# --- one action restated with another scope qualifier is one entry, the later wording --------------------------
@pytest.mark.parametrize(
    "first, second, expected",
    [
        ("Now let me delete the generated stubs (keeping the fixtures folder).",
         "I need to delete the generated stubs (not the vendored protos).",
         "delete the generated stubs, not the vendored protos"),
        ("I'll drop the legacy tables (except the audit log).",
         "I'll drop the legacy tables (keeping the billing archive).",
         "drop the legacy tables, keeping the billing archive"),
        ("Vou apagar os arquivos gerados antigos (sem os testes).",
         "Vou apagar os arquivos gerados antigos (exceto o README).",
         "apagar os arquivos gerados antigos, not o README"),
    ],
)
def test_same_action_with_another_qualifier_collapses(first, second, expected):
    b = B()
    b.user("Clean up the repository.")
    b.asst(first)
    b.bash("rm -r build/stubs")
    b.asst(second)
    b.bash("rm -r build/old")
    assert [(d.status, d.what) for d in decisions_of(b)] == [("APPROVED", expected)]


def test_different_actions_with_qualifiers_both_stay():
    b = B()
    b.user("Clean up the repository.")
    b.asst("Now let me delete the generated stubs (keeping the fixtures folder).")
    b.bash("rm -r build/stubs")
    b.asst("I'll archive the old migration files (not the seed data).")
    b.bash("tar czf old.tgz migrations/old")
    assert len(decisions_of(b)) == 2


# --- a decision in a script without Latin letters is kept ------------------------------------------------------
@pytest.mark.parametrize(
    "reply, approved, rejected",
    [
        ("不要用缓存，改用数据库。", "数据库", "缓存"),
        ("캐시 대신 데이터베이스를 사용하세요.", "데이터베이스", "캐시"),
        ("キャッシュではなくデータベースを使って。", "データベース", "キャッシュ"),
    ],
)
def test_cjk_only_choice_is_kept(reply, approved, rejected):
    b = B()
    b.user("修复登录接口。")
    b.asst("OK.")
    b.user(reply)
    got = {(d.status, d.what) for d in decisions_of(b)}
    assert got == {("APPROVED", approved), ("REJECTED", rejected)}


# --- a bare label answering a listed-options question picks that option ---------------------------------------
OPTIONS = (
    "There are a few ways to get the build artifacts to you:\n\n"
    "1. **Upload to the bucket** — push them to the team's S3 bucket\n"
    "2. **Attach to the release** — add them to the GitHub release page\n"
    "3. **Zip them** — one archive in the repo root\n\n"
    "Which one do you want?"
)


@pytest.mark.parametrize("reply, label", [("2", "2"), ("#3", "3"), ("1.", "1")])
def test_bare_number_picks_the_option(reply, label):
    b = B()
    b.user("Get me the build artifacts.")
    b.asst(OPTIONS)
    b.user(reply)
    got = decisions_of(b)
    assert [(d.status) for d in got] == ["APPROVED"]
    body = {"1": "Upload to the bucket", "2": "Attach to the release", "3": "Zip them"}[label]
    assert got[0].what.startswith(body)
    assert f'"{reply}"' in got[0].reasoning


def test_bare_letter_of_two_options_rejects_the_other():
    b = B()
    b.user("Wie sollen wir die Logs speichern?")
    b.asst("Zwei Wege:\n\na) Loki mit 30 Tagen Aufbewahrung\nb) Plain files with logrotate\n\nWelche Variante?")
    b.user("b")
    got = [(d.status, d.what) for d in decisions_of(b)]
    assert got == [("APPROVED", "Plain files with logrotate"), ("REJECTED", "Loki mit 30 Tagen Aufbewahrung")]


@pytest.mark.parametrize(
    "assistant",
    [
        OPTIONS.replace("Which one do you want?", "I'll go with the bucket unless you object."),  # no question
        "Steps I ran:\n\n1. Built the image\n2. Pushed it\n\n" + "Lots of detail here. " * 60 + "\n\nAnything else?",
    ],
)
def test_bare_number_without_an_options_question_picks_nothing(assistant):
    b = B()
    b.user("Get me the build artifacts.")
    b.asst(assistant)
    b.user("2")
    assert [d for d in decisions_of(b) if d.origin == "user-approval"] == []


# --- a reported choice in the past tense ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "sentence, approved, rejected",
    [
        ("- Used `Result<T, E>` instead of panics for `parse_header()`", "`Result<T, E>` for `parse_header()`", "panics"),
        ("We used a bloom filter rather than a hash set for the seen-URLs check, since memory is tight.",
         "a bloom filter for the seen-URLs check", "a hash set"),
        ("I used WAL mode instead of the rollback journal so readers never block.", "WAL mode", "the rollback journal"),
    ],
)
def test_used_x_instead_of_y_is_a_decision(sentence, approved, rejected):
    b = B()
    b.user("Port the parser.")
    b.asst(f"Done. Key choices:\n\n{sentence}")
    got = [(d.status, d.what) for d in decisions_of(b)]
    assert got == [("APPROVED", approved), ("REJECTED", rejected)]


def test_passive_used_instead_describes_code():
    b = B()
    b.user("Explain the config.")
    b.asst("This flag is used instead of the env var when both are set.")
    assert decisions_of(b) == []
