"""Each redaction class, its benign look-alikes, and text beyond one slice."""

from __future__ import annotations

import pytest
from pimem._redact import redact, redact_many, redact_slices, redact_tree

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
        ("key sk-proj-abcdefghijklmnopqrstuvwxyz123456", "abcdefghijklmnop", "token"),
        ("ghp_" + "a1" * 18, "a1a1a1a1", "token"),
        ("xoxb-1234567890-abcdefghij", "1234567890", "token"),
        ("AIza" + "B" * 35, "BBBBBBBB", "token"),
        ("id AKIAIOSFODNN7EXAMPLE", "IOSFODNN7", "token"),
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
        ("curl -u admin:topsecret https://x", "topsecret", "curl-user"),
        ("curl --user=admin:topsecret https://x", "topsecret", "curl-user"),
        ("DATABASE_URL=postgres://app:s3cretpw@db:5432/x", "s3cretpw", "connection-string"),
        ("mongodb+srv://u:mongo-pass-1@cluster0/x", "mongo-pass-1", "connection-string"),
        ("Server=db;User Id=sa;Password=Pa55w0rd!;", "Pa55w0rd", "connection-string"),
        # inside a tool call's arguments, rendered as JSON: quotes and line breaks arrive escaped
        (r'{"content":"\"access_key\": \"Ls%956mu^5UsIAt1y9*\""}', "Ls%956mu", "assignment"),
        (r'{"content":"DB_PASSWORD: \"correct horse battery\"\nnext"}', "correct horse", "assignment"),
        (r'{"content":"\"aws_secret_access_key\": \"' + AWS_SECRET + r'\""}', "bPxRfiCY", "aws-secret"),
        (r'{"h":"\"Authorization\": \"Basic dXNlcjpwYXNzd29yZA==\""}', "dXNlcjpwYXNz", "auth-header"),
        (r'{"command":"curl -u \"admin:topsecret\" https://x"}', "topsecret", "curl-user"),
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
        "[REDACTED:token]",
        "a [REDACTED:token] c",
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
        ("ghp_Wm3Qz8Rk2Vt7Xn4Lp9Bc5Hf1Jd6Gs0Ya2Ek", "Rk2Vt7Xn", "token"),
        ("sk-proj-Rb7Kq2Xw9Lm4Tz8Vn3Pc6Hd1Gf5Js0Ya", "Xw9Lm4Tz", "token"),
        ("AKIAZ7QWERTY2XCVBN5M", "QWERTY2X", "token"),
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
