"""Each redaction class, its benign look-alikes, and text beyond one slice."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from pimem import _redact
from pimem._keyword_trie import TrieKeywords
from pimem._redact import (
    Policy,
    redact,
    redact_many,
    redact_slices,
    redact_tree,
    redaction_policy,
)
from pimem_conformance import secrets_corpus

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(
    ("text", "secret", "marker"),
    [
        ("password=hunter2hunter2", "hunter2hunter2", "assignment"),
        ('{"api_key": "abcd1234efgh"}', "abcd1234efgh", "assignment"),
        ("DB_PASSWORD: 'correct horse battery'", "correct horse", "assignment"),
        ("client_secret = Zx9-8ab7cd6", "Zx9-8ab7cd6", "assignment"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "auth-header"),
        ("curl -H 'Bearer qwertyuiop123'", "qwertyuiop123", "auth-header"),
        ("key sk-proj-abcdefghijklmnopqrstuvwxyz123456", "abcdefghijklmnop", "openai-api-key"),
        ("ghp_" + "a1" * 18, "a1a1a1a1", "github-pat"),
        ("xoxb-1234567890-abcdefghij", "1234567890", "slack-token"),
        ("AIza" + "B" * 35, "BBBBBBBB", "gcp-api-key"),
        ("id AKIAIOSFODNN7EXAMPLE", "IOSFODNN7", "aws-access-token"),
        ("aws_secret_access_key = " + AWS_SECRET, "bPxRfiCY", "aws-secret"),
        ("AKIAIOSFODNN7EXAMPLE then " + AWS_SECRET, "bPxRfiCY", "aws-secret"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnopqrstu", "eyJzdWIi", "jwt"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
            "b3BlbnNz",
            "private-key",
        ),
        ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN (truncated)", "MIIEvQ", "private-key"),
        ("clone https://bob:pa55word@git.example.com/r.git", "pa55word", "url-userinfo"),
        ("curl -u admin:topsecret https://x", "topsecret", "curl-auth-user"),
        ("curl --user=admin:topsecret https://x", "topsecret", "curl-auth-user"),
        ("DATABASE_URL=postgres://app:s3cretpw@db:5432/x", "s3cretpw", "connection-string"),
        ("mongodb+srv://u:mongo-pass-1@cluster0/x", "mongo-pass-1", "connection-string"),
        ("Server=db;User Id=sa;Password=Pa55w0rd!;", "Pa55w0rd", "connection-string"),
        # inside a tool call's arguments, rendered as JSON: quotes and line breaks arrive escaped
        (r'{"content":"\"access_key\": \"Ls%956mu^5UsIAt1y9*\""}', "Ls%956mu", "assignment"),
        (r'{"content":"DB_PASSWORD: \"correct horse battery\"\nnext"}', "correct horse", "assignment"),
        (r'{"content":"\"aws_secret_access_key\": \"' + AWS_SECRET + r'\""}', "bPxRfiCY", "aws-secret"),
        (r'{"h":"\"Authorization\": \"Basic dXNlcjpwYXNzd29yZA==\""}', "dXNlcjpwYXNz", "auth-header"),
        (r'{"command":"curl -u \"admin:topsecret\" https://x"}', "topsecret", "curl-auth-user"),
    ],
)
def test_redaction_classes(text: str, secret: str, marker: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{marker}]" in out


@pytest.mark.parametrize(
    "text",
    [
        "TOKEN_LIMIT=100",
        "SECRET_MODE=enabled",
        "password: null",
        "max_tokens: 4096",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "author: Johnathan Smith",
        "a lone " + AWS_SECRET + " without context",
        "https://example.com/path?q=1",
        "the bearer of news",
        "token = ${GITHUB_TOKEN}",
        r'{"content":"SECRET_ROTATION_DAYS=64\nnote"}',
        r'{"content":"USE_TOKEN: yes\nSECRET_MODE: on\tmax_tokens=1024\r\n"}',
    ],
)
def test_benign_look_alikes_are_untouched(text: str) -> None:
    assert redact(text) == text


def test_secret_straddling_a_slice_boundary_is_found() -> None:
    line = "x" * 99 + "\n"
    for offset in range(0, 400, 37):
        text = line * ((1 << 20) // 100) + "y" * offset + " password=straddle9secret\n" + line * 50
        out = redact(text)
        assert "straddle9secret" not in out
        assert out.count("[REDACTED:assignment]") == 1


def test_private_key_in_large_text() -> None:
    text = "z" * (1 << 20) + "\n-----BEGIN RSA PRIVATE KEY-----\n" + "QUJD\n" * 100_000
    assert "QUJD" not in redact(text)


def test_redact_tree_reaches_every_string() -> None:
    value = {"a": ["password=abcdefgh1"], "b": {"c": "ok", "n": 3}}
    assert redact_tree(value) == {"a": ["password=[REDACTED:assignment]"], "b": {"c": "ok", "n": 3}}


def test_redacting_many_texts_at_once_is_redacting_each() -> None:
    texts = [
        "password=",  # the value is in the next text: no secret
        "hunter2hunter2 and more",
        "-----BEGIN RSA PRIVATE KEY-----\nQUJD unterminated",
        "the text after a key is not part of it",
        "AKIAIOSFODNN7EXAMPLE",
        AWS_SECRET + " beside a key id in another text",
        "x" * (1 << 18),
        "token: abcdefghij1",
    ]
    assert redact_many(texts) == [redact(text) for text in texts]
    assert redact_many(texts)[3] == texts[3]


def test_slices_are_redacted_as_in_the_whole_text() -> None:
    token = "ghp_" + "b1" * 18
    text = "a " * 5000 + token + " c" * 5000
    at = text.index(token)
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJ" + "x" * 12_000 + ".signature123"  # longer than any margin
    key = "-----BEGIN PRIVATE KEY-----\n" + "QUJD\n" * 5000 + "-----END PRIVATE KEY-----"
    pieces = [
        (text, at + 10, at + 20),  # cut on both edges
        (text, at - 2, at + len(token) + 2),
        (jwt, 9_000, 9_010),
        (key, 20_000, 20_010),  # its BEGIN line is far behind
        ("nothing secret here", 8, 14),
    ]
    assert redact_slices(pieces) == [
        "[REDACTED:github-pat]",
        "a [REDACTED:github-pat] c",
        "[REDACTED:jwt]",
        "[REDACTED:private-key]",
        "secret",
    ]


@pytest.mark.parametrize("before", ["İ", "İİİ ", "ﬃ İ"])
def test_a_character_whose_lower_case_is_longer_does_not_shift_keyword_positions(before: str) -> None:
    texts = [f"{before} x", "mysql://root:Hunter22replica@db/app", f"{before} password=Hunter22replica9"]
    redacted = [redact("\n".join(texts)), *redact_many(texts)]
    assert not [text for text in redacted if "Hunter22replica" in text]


@pytest.mark.parametrize("escape", ["\\n", "\\t", "\\r", "\\b", "\\f", '\\"', "\\\\", "\\/", "\\u001b"])
@pytest.mark.parametrize(
    ("secret", "inside", "marker"),
    [
        ("ghp_Wm3Qz8Rk2Vt7Xn4Lp9Bc5Hf1Jd6Gs0Ya2Ek", "Rk2Vt7Xn", "github-pat"),
        ("sk-proj-Rb7Kq2Xw9Lm4Tz8Vn3Pc6Hd1Gf5Js0Ya", "Xw9Lm4Tz", "openai-api-key"),
        ("AKIAZ7QWERTY2XCVBN5M", "QWERTY2X", "aws-access-token"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnopqrstu", "eyJzdWIi", "jwt"),
        ("postgres://app:s3cretpw@db:5432/x", "s3cretpw", "connection-string"),
    ],
)
def test_a_secret_right_after_a_json_escape_is_redacted(
    escape: str, secret: str, inside: str, marker: str
) -> None:
    out = redact('{"content":"notes' + escape + secret + '"}')
    assert inside not in out
    assert f"[REDACTED:{marker}]" in out


@pytest.mark.parametrize("text", ["lunghp_" + "a1" * 18, "tusk-proj-" + "ab" * 12, "XAKIAZ7QWERTY2XCVBN5M"])
def test_a_prefix_inside_a_word_is_still_no_token_start(text: str) -> None:
    assert redact(text) == text


def _corpus_texts() -> list[str]:
    texts = [
        item.context
        for corpus in (secrets_corpus.load(), secrets_corpus.load(secrets_corpus.HELDOUT_PATH))
        for item in (*corpus.secrets, *corpus.lookalikes, *corpus.placeholders)
    ]
    # and as a tool call's arguments show them: JSON-escaped once more
    return texts + [json.dumps({"content": text}, ensure_ascii=False) for text in texts]


def test_without_the_automaton_the_output_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where google-re2 has no wheel, the trie of `_keyword_trie` finds the keywords."""
    texts = _corpus_texts()
    with_automaton = [redact(text) for text in texts]
    assert _redact._KEYWORDS.automaton is not None, "google-re2 is installed here"
    monkeypatch.setattr(_redact._KEYWORDS, "matches", TrieKeywords(_redact._KEYWORDS.rules).matches)
    assert [redact(text) for text in texts] == with_automaton
    assert sum(a != b for a, b in zip(texts, with_automaton, strict=True)) > len(texts) // 2


def test_without_google_re2_installed_the_trie_redacts() -> None:
    secret = "ghp_" + "k3Jd8sPq0ZxW2mLr5TyV9nBc4HfG7aE1uQ6i"
    script = (
        "import sys; sys.modules['re2'] = None\n"  # an import of re2 now fails, as with no wheel
        "from pimem import _redact\n"
        "assert _redact._KEYWORDS.automaton is None\n"
        f"print(_redact.redact('token {secret} here'))"
    )
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == redact(f"token {secret} here") and secret not in shown


def test_the_trie_finds_the_longest_keyword_at_each_start_in_either_case() -> None:
    trie = TrieKeywords([("sk-", True), ("sk-proj-", True), ("password", False)])
    assert list(trie.matches(b"PassWord=x sk-proj-abc")) == [(0, 8), (11, 19)]
    assert list(TrieKeywords([]).matches(b"anything")) == []


def test_redacting_a_redacted_text_changes_nothing() -> None:
    for text in _corpus_texts():
        once = redact(text)
        assert redact(once) == once, once


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        (
            "deploy with glrt-t1_YfxPeHclczAyDX4d7YP5mbftRhnixL.01.66051wj today",
            "gitlab-runner-authentication-token-routable",
        ),
        ("GITLAB_TOKEN=glpat-PijyOE29SAA3FGfyed6rrfUhRVUGo8KZKSAt.01.uqnxcex", "gitlab-pat-routable"),
        ("ASANA_CLIENT_SECRET=0123456789abcdefghijklmnopqrstuv", "asana-client-secret"),
    ],
)
def test_the_marker_names_the_most_specific_rule(text: str, marker: str) -> None:
    assert redact(text).count("[REDACTED:") == 1
    assert f"[REDACTED:{marker}]" in redact(text)


ACME = "acme_Q7mR2vK9xT4pL8wN3bC6hF1jD5gS0yA2"
USER_POLICY = Policy.from_settings(
    [{"name": "acme-token", "pattern": "acme_[A-Za-z0-9]{32}"}],
    ["AKIAIOSFODNN7EXAMPLE", {"pattern": "ghp_0{36}"}],
)


def test_a_users_pattern_is_masked_under_its_own_name_everywhere() -> None:
    text = f"deploy {ACME} now"
    assert redact(text) == text  # no public rule knows it
    with redaction_policy(USER_POLICY):
        assert redact(text) == "deploy [REDACTED:acme-token] now"
        assert redact_many([text, "x"]) == ["deploy [REDACTED:acme-token] now", "x"]
        assert redact_slices([(text, 0, 12)]) == ["deploy [REDACTED:acme-token]"]
        assert redact(redact(text)) == redact(text)
    assert redact(text) == text  # only within the block


def test_the_allowlist_spares_exactly_its_values() -> None:
    text = "docs AKIAIOSFODNN7EXAMPLE prod AKIAZ7QWERTY2XCVBN5M zero ghp_" + "0" * 36
    with redaction_policy(USER_POLICY):
        out = redact(text)
    assert "AKIAIOSFODNN7EXAMPLE" in out and "ghp_" + "0" * 36 in out
    assert "AKIAZ7QWERTY2XCVBN5M" not in out and "[REDACTED:aws-access-token]" in out


@pytest.mark.parametrize(
    ("patterns", "allow", "message"),
    [
        ([{"pattern": "("}], [], "is not a regular expression"),
        ([{"pattern": "x*"}], [], "matches the empty string"),
        ([{"name": "Bad Name", "pattern": "x+"}], [], "a name is lower-case"),
        (["acme_.*"], [], "each item is an object with a pattern"),
        ([], [3], "a literal string or"),
    ],
)
def test_malformed_settings_say_what_is_wrong(patterns: Any, allow: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Policy.from_settings(patterns, allow)
