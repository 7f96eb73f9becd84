"""The redaction rule table: one entry per secret format.

Each rule names the source rule it follows (a gitleaks default rule ID, or a detect-secrets plugin's
format), and is our own definition written from that format's documented shape: its prefix, its
alphabet and its length. `rules-coverage.json` maps every source rule to the rule here that covers
it. A rule is tried only where one of its keywords occurs (see `_redact.py`), so the whole table
costs one keyword pass per text. Adding a format is one entry here and one maker in the secrets
corpus.

Kinds of entries:
- `_token`: a format with a distinctive prefix or shape, caught anywhere (no key name needed);
- `_named`: a vendor's key name (`ASANA_SECRET`, `asana.client_secret`) assigned a value of the
  vendor's shape;
- the families below them (key blocks, JWTs, credentials in URLs and command lines, HTTP headers,
  connection strings), and the generic keyword assignments last.

The order breaks ties: when spans overlap, the marker names the first rule of the table among them,
so the most specific rule names the secret.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["RULES", "SEPARATOR", "Rule", "entropy"]

Span = tuple[int, int]
# (text, where a keyword starts) -> the secrets' spans found from there
Finder = Callable[[str, int], Iterable[Span]]

# Between texts redacted together: no rule matches across it (no value runs over a newline and a
# NUL), a key block ends at it and AWS context stops at it.
SEPARATOR = "\n\x00\n"
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ESCAPE_BEFORE = re.compile(r"\\(?:[bfnrt\"\\/]|u[0-9A-Fa-f]{4})")
_NONE: tuple[Span, ...] = ()


@dataclass(frozen=True)
class Rule:
    id: str  # the marker names it: [REDACTED:<id>]
    keywords: tuple[str, ...]  # lower case unless case_sensitive
    find: Finder
    case_sensitive: bool = False  # keywords are found in the text as written, not lower-cased
    whole: bool = False  # unbounded (a key block): scanned over the whole text, never per window


def _escape_ends_at(text: str, position: int) -> bool:
    """Whether a JSON escape (`\\n`, `\\t`, `\\u001b` ...) ends right before `position`."""
    return any(
        position >= width
        and text[position - width] == "\\"
        and _ESCAPE_BEFORE.fullmatch(text, position - width, position) is not None
        for width in (2, 6)
    )


def starts_token(text: str, start: int) -> bool:
    """Whether a token may start at `start`: not in the middle of another token. Tool-call
    arguments arrive JSON-escaped, and an escape right before a token stands for the character
    it escapes, so its letter or hex digit does not continue a token."""
    return start == 0 or text[start - 1] not in _TOKEN_CHARS or _escape_ends_at(text, start)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(count / total * math.log2(count / total) for count in counts.values())


_WORD = re.compile(r"[A-Za-z][a-z]*\d{0,3}")
_NAME_RUN = re.compile(r"[A-Za-z0-9_.\-]*")  # what a name may run on with after a token's match


def _word_like(value: str) -> bool:
    """Words joined by `-`, `_` or `.` (`learn-compatible-estimator2`): a name, not a key."""
    parts = re.split(r"[-_.]", value)
    return len(parts) > 1 and all(_WORD.fullmatch(part) for part in parts if part)


def _looks_random(value: str) -> bool:
    """Mixed character classes, as generated keys have and words, paths, numbers and hyphenated
    names do not."""
    if _word_like(value):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )
    return classes >= 2 and "/" not in value and entropy(value) >= 2.5


# ---- builders ------------------------------------------------------------------------------------

# After a value: a quote, space, separator or the end, or a JSON escape.
_END = r"(?=[\x60'\"\s;,<>)}\]&|]|\\[nrtu\"\\/]|[^\x00-\x7f]|$)"


def _token(
    rule_id: str,
    pattern: str,
    keywords: tuple[str, ...],
    *,
    flags: int = 0,
    lead: int = 0,
    case_sensitive: bool = False,
    group: int = 0,
    accept: Callable[[str], bool] | None = None,
    starts: bool = True,
) -> Rule:
    """A format caught by its own shape. `pattern` starts with the keyword, or `lead` characters at
    most before it (a keyword inside the format, like `.atlasv1.`); the match must start a token
    (unless `starts` is false: a keyword inside a URL). A match whose body (what follows the
    keyword) is words joined by `_`, `-` or `.` is an identifier or a file name that only starts
    like the format (`xoxb-event-handler.ts`, `sk-learn-compatible`), not a token (JM-REDACT-071)."""
    compiled = re.compile(pattern, flags)
    prefixes = sorted(keywords, key=len, reverse=True)

    def identifier(text: str, match: re.Match[str]) -> bool:
        """Whether the match, with the rest of the name it runs on in (`xoxa-verifier_parser`),
        is the keyword and words."""
        run = _NAME_RUN.match(text, match.end())
        value = text[match.start() : run.end() if run else match.end()]
        start = value if case_sensitive else value.lower()
        prefix = next((prefix for prefix in prefixes if start.startswith(prefix)), "")
        return _word_like(value[len(prefix) :])

    def find(text: str, position: int) -> Iterable[Span]:
        if lead:
            match = compiled.search(text, max(0, position - lead), position + 1024)
            if (
                match is None
                or match.start() > position
                or (starts and not starts_token(text, match.start()))
            ):
                return _NONE
        else:
            if starts and not starts_token(text, position):
                return _NONE  # checked first: most keyword hits are inside a word
            match = compiled.match(text, position)
            if match is None:
                return _NONE
        if (accept and not accept(match.group(group))) or (not lead and identifier(text, match)):
            return _NONE
        return (match.span(group),)

    return Rule(rule_id, keywords, find, case_sensitive=case_sensitive)


def _tokens(rule_id: str, prefixes: tuple[str, ...], body: str, *, case_sensitive: bool = False) -> Rule:
    """`_token` for formats that are one of several literal prefixes and a body."""
    alternatives = "|".join(re.escape(prefix) for prefix in prefixes)
    keywords = prefixes if case_sensitive else tuple(prefix.lower() for prefix in prefixes)
    return _token(rule_id, f"(?:{alternatives}){body}", keywords, case_sensitive=case_sensitive)


# A key name's tail, the assignment between it and the value, and the value's opening quote, in
# every carrier a journal has: `NAME=v`, `name: v`, `"name": "v"`, `name => 'v'`, `<name>v`,
# `key="name" value="v"`, and the same JSON-escaped (a quote arrives as \").
_NAME_TAIL = r"[\w.\-]{0,40}?"
_ASSIGN = (
    r"(?:[ \t]{0,20}[\w.\-]{0,20})?(?:\\*[\"'\x60]|[ \t]){0,3}"
    r"(?:=>|:{1,3}=|\?=|\|\||[=:>,]|value[ \t]*=)(?:\\*[\"'\x60]|\s|=){0,5}"
)


def _named(
    rule_id: str, names: str, value: str, keywords: tuple[str, ...], *, min_entropy: float = 0.0
) -> Rule:
    """A vendor's key name, then an assignment, then a value of the vendor's shape."""
    compiled = re.compile(f"(?:{names}){_NAME_TAIL}{_ASSIGN}({value}){_END}", re.IGNORECASE)

    def find(text: str, position: int) -> Iterable[Span]:
        match = compiled.match(text, position)
        if match is None or (min_entropy and entropy(match.group(1)) < min_entropy):
            return _NONE
        return (match.span(1),)

    return Rule(rule_id, keywords, find)


_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_B64 = r"[A-Za-z0-9+/]"


def _vendor(rule_id: str, vendor: str, value: str, **options: float) -> Rule:
    """`_named` for the common case: one vendor word is both the name and the keyword."""
    return _named(rule_id, re.escape(vendor), value, (vendor.lower(),), **options)


def _pattern(pattern: str, flags: int = 0, accept: Callable[[str], bool] | None = None) -> Finder:
    """The last group of `pattern` matched where a keyword starts, if `accept` takes it."""
    compiled = re.compile(pattern, flags)

    def find(text: str, position: int) -> Iterable[Span]:
        match = compiled.match(text, position)
        if match is None:
            return _NONE
        group = match.lastindex or 0
        if accept and not accept(match.group(group)):
            return _NONE
        return (match.span(group),)

    return find


# The app id (15 or 16 digits) before the `|` and the app secret (32 hex) after it.
_FACEBOOK_APP_TOKEN = re.compile(r"\d{15,16}(?:\||%7[Cc])[0-9a-f]{32}(?![A-Za-z0-9_\-])")


def _facebook_app_token(text: str, position: int) -> Iterable[Span]:
    if not text[position - 1 : position].isdigit():
        return _NONE  # checked first: most `|` are pipes and table cells
    for start in (position - 16, position - 15):
        if start >= 0 and starts_token(text, start) and (match := _FACEBOOK_APP_TOKEN.match(text, start)):
            return (match.span(),)
    return _NONE


# A legacy Vault service token, `s.` and 24 letters and digits, after a key name with `vault` or
# `token` in it (`VAULT_TOKEN=`, `"client_token":`, `X-Vault-Token:`), or spaces after it (the table
# `vault login` prints).
_VAULT_LEGACY_TOKEN = re.compile(
    rf"(?i)(?:vault|token){_NAME_TAIL}(?:{_ASSIGN}|[ \t]+)(s\.[a-z0-9]{{24}}){_END}"
)


def _vault_legacy_token(text: str, position: int) -> Iterable[Span]:
    if text.find("s.", position, position + 120) < 0:
        return _NONE  # checked first: most key names with `token` in them hold other values
    match = _VAULT_LEGACY_TOKEN.match(text, position)
    return (match.span(1),) if match else _NONE


# ---- vendor formats with a distinctive prefix or shape --------------------------------------------

_VENDOR_TOKENS = (
    _token(
        "1password-secret-key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?![A-Za-z0-9])",
        ("A3-",),
        case_sensitive=True,
    ),
    _token(
        "1password-service-account-token",
        r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}",
        ("ops_eyJ",),
        case_sensitive=True,
    ),
    _token("adobe-client-secret", r"p8e-[A-Za-z0-9]{32}(?![A-Za-z0-9])", ("p8e-",)),
    _token(
        "age-secret-key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        ("AGE-SECRET-KEY-1",),
        case_sensitive=True,
    ),
    _token(
        "airtable-personnal-access-token",
        r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])",
        ("pat",),
        case_sensitive=True,
    ),
    _token("alibaba-access-key-id", r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])", ("LTAI",), case_sensitive=True),
    _token(
        "anthropic-admin-api-key",
        r"sk-ant-admin01-[A-Za-z0-9_\-]{93}AA(?![A-Za-z0-9_\-])",
        ("sk-ant-admin01-",),
    ),
    _token("anthropic-api-key", r"sk-ant-api03-[A-Za-z0-9_\-]{93}AA(?![A-Za-z0-9_\-])", ("sk-ant-api03-",)),
    _token("artifactory-api-key", r"AKCp[A-Za-z0-9]{69}(?![A-Za-z0-9])", ("AKCp",), case_sensitive=True),
    _token(
        "artifactory-reference-token", r"cmVmd[A-Za-z0-9]{59}(?![A-Za-z0-9])", ("cmVmd",), case_sensitive=True
    ),
    _token("atlassian-api-token", r"ATATT3[A-Za-z0-9_\-=]{186}", ("ATATT3",), case_sensitive=True),
    _token(
        "authress-service-client-access-key",
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}",
        ("sc_", "ext_", "scauth_", "authress_"),
    ),
    _tokens(
        "aws-access-token",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        r"[A-Z0-9]{16,17}(?![A-Za-z0-9])",
        case_sensitive=True,
    ),
    _token(
        "aws-amazon-bedrock-api-key-long-lived",
        r"ABSK[A-Za-z0-9+/]{109,269}={0,2}",
        ("ABSK",),
        case_sensitive=True,
    ),
    _token(
        "aws-amazon-bedrock-api-key-short-lived",
        r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%\-]*",
        ("bedrock-api-key-",),
    ),
    _token(
        "azure-ad-client-secret",
        r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~\-])(?!\.[A-Za-z0-9_~\-])",
        ("Q~",),
        lead=4,
        case_sensitive=True,
    ),
    _token(
        "clickhouse-cloud-api-secret-key",
        r"4b1d[A-Za-z0-9]{38}(?![A-Za-z0-9])",
        ("4b1d",),
        case_sensitive=True,
    ),
    _token("clojars-api-token", r"CLOJARS_[a-z0-9]{60}", ("clojars_",), flags=re.IGNORECASE),
    _token("cloudflare-origin-ca-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", ("v1.0-",)),
    _token("databricks-api-token", r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", ("dapi",)),
    _token(
        "defined-networking-api-token",
        r"dnkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52}",
        ("dnkey-",),
        flags=re.IGNORECASE,
    ),
    _tokens("digitalocean-access-token", ("doo_v1_",), r"[a-f0-9]{64}"),
    _tokens("digitalocean-pat", ("dop_v1_",), r"[a-f0-9]{64}"),
    _tokens("digitalocean-refresh-token", ("dor_v1_",), r"[a-f0-9]{64}"),
    # A bot token starts with its user id, a decimal number, in base64: M, N or O and a digit's code.
    _token(
        "discord-bot-token",
        r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?![A-Za-z0-9_\-])",
        ("MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"),
        case_sensitive=True,
    ),
    _token(
        "doppler-api-token",
        r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}",
        ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."),
    ),
    _token("duffel-api-token", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", ("duffel_",)),
    _token("dynatrace-api-token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", ("dt0c01.",)),
    _token("easypost-api-token", r"EZAK[A-Za-z0-9]{54}(?![A-Za-z0-9])", ("EZAK",), case_sensitive=True),
    _token("easypost-test-api-token", r"EZTK[A-Za-z0-9]{54}(?![A-Za-z0-9])", ("EZTK",), case_sensitive=True),
    # `<app id>|<app secret>` (an app access token, also URL-encoded), found from its `|`
    Rule("facebook-app-access-token", ("|", "%7c"), _facebook_app_token),
    # user and page access tokens: `EAA`, then the app's and the token's own characters
    _token("facebook-page-access-token", r"EAA[A-Za-z0-9]{100,}", ("EAA",), case_sensitive=True),
    _token("flutterwave-public-key", r"FLWPUBK(?:_TEST)?-[a-h0-9]{32}-X", ("FLWPUBK",), case_sensitive=True),
    _token("flutterwave-secret-key", r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X", ("FLWSECK",), case_sensitive=True),
    _token(
        "flutterwave-encryption-key",
        r"FLWSECK(?:_TEST)?-?[a-h0-9]{12}(?![A-Za-z0-9])",
        ("FLWSECK",),
        case_sensitive=True,
    ),
    _token(
        "flyio-access-token",
        r"(?:fo1_[\w\-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
        ("fo1_", "fm1a_", "fm1r_", "fm2_"),
    ),
    _token("frameio-api-token", r"fio-u-[A-Za-z0-9_\-=]{64}", ("fio-u-",)),
    _token("gcp-api-key", r"AIza[\w\-]{35}(?![\w\-])", ("AIza",), case_sensitive=True),
    _tokens("github-app-token", ("ghu_", "ghs_"), r"[0-9A-Za-z]{30,}"),
    _tokens("github-fine-grained-pat", ("github_pat_",), r"[0-9A-Za-z_]{30,}"),
    _tokens("github-oauth", ("gho_",), r"[0-9A-Za-z]{30,}"),
    _tokens("github-pat", ("ghp_",), r"[0-9A-Za-z]{30,}"),
    _tokens("github-refresh-token", ("ghr_",), r"[0-9A-Za-z]{30,}"),
    _token("gitlab-cicd-job-token", r"glcbt-[0-9A-Za-z]{1,5}_[0-9A-Za-z_\-]{20,}", ("glcbt-",)),
    _tokens("gitlab-deploy-token", ("gldt-",), r"[0-9A-Za-z_\-]{20,}"),
    _tokens("gitlab-feature-flag-client-token", ("glffct-",), r"[0-9A-Za-z_\-]{20,}"),
    _tokens("gitlab-feed-token", ("glft-",), r"[0-9A-Za-z_\-]{20,}"),
    _tokens("gitlab-incoming-mail-token", ("glimt-",), r"[0-9A-Za-z_\-]{25,}"),
    _tokens("gitlab-kubernetes-agent-token", ("glagent-",), r"[0-9A-Za-z_\-]{50,}"),
    _tokens("gitlab-oauth-app-secret", ("gloas-",), r"[0-9A-Za-z_\-]{64,}"),
    _tokens(
        "gitlab-pat-routable",
        ("glpat-",),
        r"[0-9A-Za-z_\-]{27,300}\.[0-9a-z]{2}(?:\.[0-9a-z]{9}|\.?[0-9a-z]{7})(?![0-9a-z])",
    ),
    _tokens("gitlab-pat", ("glpat-",), r"[\w\-]{20,}"),
    _tokens("gitlab-ptt", ("glptt-",), r"[0-9a-f]{40}"),
    _tokens("gitlab-rrt", ("GR1348941",), r"[\w\-]{20,}", case_sensitive=True),
    _tokens(
        "gitlab-runner-authentication-token-routable",
        ("glrt-",),
        r"t\d_[0-9A-Za-z_\-]{27,300}\.[0-9a-z]{2}(?:\.[0-9a-z]{9}|\.?[0-9a-z]{7})(?![0-9A-Za-z])",
    ),
    _tokens("gitlab-runner-authentication-token", ("glrt-",), r"[0-9A-Za-z_\-]{20,}"),
    _tokens("gitlab-scim-token", ("glsoat-",), r"[0-9A-Za-z_\-]{20,}"),
    _token("gitlab-session-cookie", r"_gitlab_session=([0-9a-z]{32})", ("_gitlab_session=",), group=1),
    _token("grafana-api-key", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", ("eyJrIjoi",), case_sensitive=True),
    _token("grafana-cloud-api-token", r"glc_[A-Za-z0-9+/]{32,400}={0,3}", ("glc_",)),
    _token("grafana-service-account-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", ("glsa_",)),
    _token(
        "harness-api-key",
        r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
        ("pat.", "sat."),
    ),
    _token(
        "hashicorp-tf-api-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}", (".atlasv1.",), lead=14
    ),
    _token("heroku-api-key-v2", r"HRKU-AA[0-9A-Za-z_\-]{58}", ("HRKU-",), case_sensitive=True),
    _token("huggingface-access-token", r"hf_[A-Za-z0-9]{30,}", ("hf_",)),
    _token("huggingface-organization-api-token", r"api_org_[A-Za-z]{34}(?![A-Za-z0-9])", ("api_org_",)),
    _token("infracost-api-token", r"ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])", ("ico-",)),
    _token("intra42-client-secret", r"s-s4t2(?:ud|af)-[a-f0-9]{64}", ("s-s4t2ud-", "s-s4t2af-")),
    _token("jwt-base64", r"ZXlK[A-Za-z0-9+/_\-]{40,}={0,2}", ("ZXlK",), case_sensitive=True),
    _token("linear-api-key", r"lin_api_[A-Za-z0-9]{40}", ("lin_api_",)),
    _token("mailchimp-api-key", r"[a-f0-9]{32}-us\d{1,2}(?![A-Za-z0-9])", ("-us",), lead=32),
    _token("mailgun-private-api-token", r"key-[a-f0-9]{32}(?![A-Za-z0-9])", ("key-",)),
    _token("mailgun-pub-key", r"pubkey-[a-f0-9]{32}(?![A-Za-z0-9])", ("pubkey-",)),
    _token(
        "mapbox-api-token",
        r"[ps]k\.(?:eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{60}\.[A-Za-z0-9]{22})",
        ("pk.", "sk."),
    ),
    _token("maxmind-license-key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9])", ("_mmk",), lead=36),
    _token(
        "microsoft-teams-webhook",
        r"\.webhook\.office\.com/webhookb2/([^\s\"'\\<>]{40,})",
        (".webhook.office.com/",),
        group=1,
        starts=False,
    ),
    _token("new-relic-browser-api-token", r"NRJS-[a-f0-9]{19}", ("NRJS-",), case_sensitive=True),
    _token("new-relic-insert-key", r"NRII-[A-Za-z0-9\-]{32}", ("NRII-",), case_sensitive=True),
    _token("new-relic-user-api-key", r"NRAK-[A-Za-z0-9]{27}", ("NRAK-",), case_sensitive=True),
    _token(
        "notion-api-token",
        r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})(?![A-Za-z0-9])",
        ("ntn_", "secret_"),
    ),
    _token("npm-access-token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", ("npm_",)),
    _token("octopus-deploy-api-key", r"API-[A-Z0-9]{26}(?![A-Za-z0-9])", ("API-",), case_sensitive=True),
    _token("openai-api-key", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", ("sk-",)),
    _token("openshift-user-token", r"sha256~[\w\-]{43}(?![\w\-])", ("sha256~",)),
    _token("perplexity-api-key", r"pplx-[A-Za-z0-9]{48}", ("pplx-",)),
    _token(
        "plaid-api-token",
        rf"access-(?:sandbox|development|production)-{_UUID}",
        ("access-sandbox-", "access-development-", "access-production-"),
    ),
    _tokens("planetscale-api-token", ("pscale_tkn_",), r"[\w=.\-]{32,64}"),
    _tokens("planetscale-oauth-token", ("pscale_oauth_",), r"[\w=.\-]{32,64}"),
    _tokens("planetscale-password", ("pscale_pw_",), r"[\w=.\-]{32,64}"),
    _token("postman-api-token", r"PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}", ("PMAK-",), case_sensitive=True),
    _token("prefect-api-token", r"pnu_[A-Za-z0-9]{36}", ("pnu_",)),
    _token("pulumi-api-token", r"pul-[a-f0-9]{40}", ("pul-",)),
    _token("pypi-upload-token", r"pypi-Ag[\w\-]{50,}", ("pypi-ag",)),
    _token("readme-api-token", r"rdme_[a-z0-9]{70}", ("rdme_",)),
    _token("rubygems-api-token", r"rubygems_[a-f0-9]{48}", ("rubygems_",)),
    _token("scalingo-api-token", r"tk-us-[\w\-]{48}", ("tk-us-",)),
    _token(
        "sendgrid-api-token",
        r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}",
        ("SG.",),
        case_sensitive=True,
    ),
    _token("sendinblue-api-token", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", ("xkeysib-",)),
    _token("sentry-org-token", r"sntrys_eyJ[A-Za-z0-9+/=_]{30,}", ("sntrys_",)),
    _token("sentry-user-token", r"sntryu_[a-f0-9]{64}", ("sntryu_",)),
    _tokens("settlemint-application-access-token", ("sm_aat_",), r"[A-Za-z0-9]{16}"),
    _tokens("settlemint-personal-access-token", ("sm_pat_",), r"[A-Za-z0-9]{16}"),
    _tokens("settlemint-service-access-token", ("sm_sat_",), r"[A-Za-z0-9]{16}"),
    _token("shippo-api-token", r"shippo_(?:live|test)_[A-Fa-f0-9]{40}", ("shippo_",)),
    _tokens("shopify-access-token", ("shpat_",), r"[A-Fa-f0-9]{32}"),
    _tokens("shopify-custom-access-token", ("shpca_",), r"[A-Fa-f0-9]{32}"),
    _tokens("shopify-private-app-access-token", ("shppa_",), r"[A-Fa-f0-9]{32}"),
    _tokens("shopify-shared-secret", ("shpss_",), r"[A-Fa-f0-9]{32}"),
    _token(
        "sidekiq-sensitive-url",
        r"https?://([a-f0-9]{8}:[a-f0-9]{8})@(?:gems|enterprise)\.contribsys\.com",
        ("@gems.contribsys.com", "@enterprise.contribsys.com"),
        lead=26,
        group=1,
    ),
    _token("slack-app-token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", ("xapp-",), flags=re.IGNORECASE),
    _token(
        "slack-config-access-token", r"xoxe\.xox[bp]-\d-[A-Z0-9]{163,166}", ("xoxe.xox",), flags=re.IGNORECASE
    ),
    _token("slack-config-refresh-token", r"xoxe-\d-[A-Z0-9]{146}", ("xoxe-",), flags=re.IGNORECASE),
    _token("slack-bot-token", r"xoxb-[0-9]{10,13}-[0-9]{10,13}[A-Za-z0-9\-]*", ("xoxb-",)),
    _token("slack-legacy-bot-token", r"xoxb-[0-9]{8,14}-[A-Za-z0-9]{18,26}", ("xoxb-",)),
    _token("slack-legacy-token", r"xox[os]-\d+-\d+-\d+-[A-Fa-f0-9]+", ("xoxo-", "xoxs-")),
    _token("slack-legacy-workspace-token", r"xox[ar]-(?:\d-)?[0-9A-Za-z]{8,48}", ("xoxa-", "xoxr-")),
    _token("slack-user-token", r"xox[pe](?:-[0-9]{10,13}){3}-[A-Za-z0-9\-]{28,34}", ("xoxp-", "xoxe-")),
    _token(
        "slack-webhook-url",
        r"hooks\.slack\.com/((?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,})",
        ("hooks.slack.com/",),
        group=1,
        starts=False,
    ),
    # detect-secrets' Slack shape, for the token kinds none of the above knows
    _token(
        "slack-token",
        r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}",
        ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"),
    ),
    _tokens("sourcegraph-access-token", ("sgp_",), r"(?:[A-Fa-f0-9]{16}_|local_)?[A-Fa-f0-9]{40}"),
    _token("square-access-token", r"(?:EAAA|sq0atp-)[\w\-]{22,60}", ("EAAA", "sq0atp-"), case_sensitive=True),
    _token("square-oauth-secret", r"sq0csp-[\w\-]{43}", ("sq0csp-",)),
    _token(
        "stripe-access-token",
        r"(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}|pk_live_[A-Za-z0-9]{20,99}",
        ("sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_", "pk_live_"),
    ),
    _token(
        "telegram-bot-api-token",
        r"[0-9]{5,16}:A[A-Za-z0-9_\-]{34}(?![A-Za-z0-9_\-])",
        (":A",),
        lead=16,
        case_sensitive=True,
    ),
    # SK and its first hex digit: `SK` alone is in every TASK and SKIP, a third of all keyword hits
    _token(
        "twilio-api-key",
        r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        tuple(f"SK{digit}" for digit in "0123456789abcdefABCDEF"),
        case_sensitive=True,
    ),
    _token(
        "twitter-bearer-token", r"A{22}[A-Za-z0-9%]{80,100}", ("AAAAAAAAAAAAAAAAAAAAAA",), case_sensitive=True
    ),
    _token("typeform-api-token", r"tfp_[A-Za-z0-9_.=\-]{59}", ("tfp_",)),
    _token("vault-batch-token", r"hvb\.[\w\-]{138,300}", ("hvb.",)),
    _token("vault-service-token", r"hvs\.[\w\-]{90,120}", ("hvs.",)),
    _token("yandex-api-key", r"AQVN[A-Za-z0-9_\-]{35,38}(?![A-Za-z0-9_\-])", ("AQVN",), case_sensitive=True),
    # Formats their providers document that neither gitleaks' default rules nor detect-secrets name.
    _token(
        "braintree-access-token",
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
        ("access_token$",),
    ),
    _token("buildkite-api-token", r"bkua_[a-f0-9]{40}(?![A-Za-z0-9])", ("bkua_",)),
    _token(
        "discord-webhook-url",
        r"discord(?:app)?\.com/api/webhooks/(\d{15,21}/[A-Za-z0-9_\-]{60,})",
        ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
        group=1,
        starts=False,
    ),
    _token("docker-hub-pat", r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{27,}", ("dckr_pat_", "dckr_oat_")),
    _token("figma-pat", r"fig[dou]_[A-Za-z0-9_\-]{40,}", ("figd_", "figo_", "figu_")),
    _token("google-oauth-access-token", r"ya29\.[A-Za-z0-9_\-]{30,}", ("ya29.",), case_sensitive=True),
    _token(
        "google-oauth-client-secret",
        r"GOCSPX-[A-Za-z0-9_\-]{28}(?![A-Za-z0-9_\-])",
        ("GOCSPX-",),
        case_sensitive=True,
    ),
    _token("groq-api-key", r"gsk_[A-Za-z0-9]{48,56}(?![A-Za-z0-9])", ("gsk_",)),
    _token("netlify-pat", r"nf[pcou]_[A-Za-z0-9]{36,}", ("nfp_", "nfc_", "nfo_", "nfu_")),
    _token("replicate-api-token", r"r8_[A-Za-z0-9]{37}(?![A-Za-z0-9])", ("r8_",)),
    _token("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/=]{32,}", ("whsec_",)),
    _token("supabase-access-token", r"sbp_(?:oauth_)?[a-f0-9]{40}(?![A-Za-z0-9])", ("sbp_",)),
    _token("supabase-secret-key", r"sb_secret_[A-Za-z0-9_\-]{31,}", ("sb_secret_",)),
    _token("xai-api-key", r"xai-[A-Za-z0-9]{80}(?![A-Za-z0-9])", ("xai-",)),
)

# ---- vendor formats that only a key name makes recognisable --------------------------------------

_A32 = "[a-z0-9]{32}"
_H32 = "[a-f0-9]{32}"
_VENDOR_NAMED = (
    _vendor("adafruit-api-key", "adafruit", "[a-z0-9_-]{32}"),
    _vendor("adobe-client-id", "adobe", _H32),
    _vendor("airtable-api-key", "airtable", "[a-z0-9]{17}"),
    _vendor("algolia-api-key", "algolia", _A32),
    _vendor("alibaba-secret-key", "alibaba", "[a-z0-9]{30}"),
    _vendor("asana-client-id", "asana", "[0-9]{16}"),
    _vendor("asana-client-secret", "asana", _A32),
    _named(
        "atlassian-api-token-named",
        "atlassian|confluence|jira",
        "[a-z0-9]{20}[a-f0-9]{4}",
        ("atlassian", "confluence", "jira"),
    ),
    _vendor("beamer-api-token", "beamer", "b_[a-z0-9=_-]{44}"),
    _vendor("bitbucket-client-id", "bitbucket", _A32),
    _vendor("bitbucket-client-secret", "bitbucket", "[a-z0-9=_-]{64}"),
    _vendor("bittrex-access-key", "bittrex", _A32),
    _vendor("cisco-meraki-api-key", "meraki", "[0-9a-f]{40}"),
    _vendor("cloudant-credentials", "cloudant", "[0-9a-f]{64}|[a-z]{24}"),
    _vendor("cloudflare-api-key", "cloudflare", "[a-z0-9_-]{40}"),
    _vendor("cloudflare-global-api-key", "cloudflare", "[a-f0-9]{37}"),
    _vendor("codecov-access-token", "codecov", _A32),
    _named("cohere-api-token", "cohere|co_api_key", "[a-z0-9]{40}", ("cohere", "co_api_key")),
    _vendor("coinbase-access-token", "coinbase", "[a-z0-9_-]{64}"),
    _vendor("confluent-access-token", "confluent", "[a-z0-9]{16}"),
    _vendor("confluent-secret-key", "confluent", "[a-z0-9]{64}"),
    _vendor("contentful-delivery-api-token", "contentful", "[a-z0-9=_-]{43}"),
    _vendor("datadog-access-token", "datadog", "[a-z0-9]{40}"),
    _vendor("discord-api-token", "discord", "[a-f0-9]{64}"),
    _vendor("discord-client-id", "discord", "[0-9]{18}"),
    _vendor("discord-client-secret", "discord", "[a-z0-9=_-]{32}"),
    _vendor("droneci-access-token", "droneci", _A32),
    _vendor("dropbox-long-lived-api-token", "dropbox", "[a-z0-9]{11}AAAAAAAAAA[a-z0-9_=-]{43}"),
    _vendor("dropbox-short-lived-api-token", "dropbox", r"sl\.[a-z0-9_=-]{130,140}"),
    _vendor("dropbox-api-token", "dropbox", "[a-z0-9]{15}"),
    _vendor("etsy-access-token", "etsy", "[a-z0-9]{24}"),
    _named(
        "facebook-access-token", "facebook|fb", r"[0-9]{15,16}(?:\||%7C)[0-9a-z_-]{27,40}", ("facebook", "fb")
    ),
    _vendor("facebook-secret", "facebook", _H32),
    _vendor("fastly-api-token", "fastly", "[a-z0-9=_-]{32}"),
    _vendor("finicity-api-token", "finicity", _H32),
    _vendor("finicity-client-secret", "finicity", "[a-z0-9]{20}"),
    _vendor("finnhub-access-token", "finnhub", "[a-z0-9]{20}"),
    _vendor("flickr-access-token", "flickr", _A32),
    _named(
        "freemius-secret-key",
        r"secret[_.\-]?key",
        r"sk_[^\s'\"\\]{29}",
        ("secret_key", "secret-key", "secret.key", "secretkey"),
    ),
    _vendor("freshbooks-access-token", "freshbooks", "[a-z0-9]{64}"),
    _vendor("gitter-access-token", "gitter", "[a-z0-9_-]{40}"),
    _vendor("gocardless-api-token", "gocardless", "live_[a-z0-9_=-]{40}"),
    _named(
        "hashicorp-tf-password",
        r"administrator[_.\-]?login[_.\-]?password",
        "[a-z0-9=_-]{8,20}",
        (
            *("administrator_login_password", "administrator-login-password"),
            *("administrator.login.password", "administratorloginpassword"),
        ),
    ),
    _vendor("heroku-api-key", "heroku", _UUID),
    _vendor("hubspot-api-key", "hubspot", _UUID),
    _named(
        "ibm-cloud-iam-key",
        r"(?:ibm|iam)[\w.-]{0,20}?(?:key|pwd|password|pass|token)",
        "[a-z0-9_-]{44}",
        ("ibm", "iam"),
    ),
    _named(
        "ibm-cos-hmac-secret",
        r"(?:ibm|cos)[\w.-]{0,20}?secret[-_.]?(?:access)?[-_.]?key",
        "[a-f0-9]{48}",
        ("ibm", "cos"),
    ),
    _vendor("intercom-api-key", "intercom", "[a-z0-9=_-]{60}"),
    _named(
        "jfrog-api-key",
        "jfrog|artifactory|bintray|xray",
        "[a-z0-9]{73}",
        ("jfrog", "artifactory", "bintray", "xray"),
    ),
    _named(
        "jfrog-identity-token",
        "jfrog|artifactory|bintray|xray",
        "[a-z0-9]{64}",
        ("jfrog", "artifactory", "bintray", "xray"),
    ),
    _vendor("kraken-access-token", "kraken", "[a-z0-9/=_+-]{80,90}"),
    _vendor("kucoin-access-token", "kucoin", "[a-f0-9]{24}"),
    _vendor("kucoin-secret-key", "kucoin", _UUID),
    _vendor("launchdarkly-access-token", "launchdarkly", "[a-z0-9=_-]{40}"),
    _vendor("linear-client-secret", "linear", _H32),
    _named(
        "linkedin-client-id",
        r"linked[_.\-]?in",
        "[a-z0-9]{14}",
        ("linkedin", "linked_in", "linked-in", "linked.in"),
    ),
    _named(
        "linkedin-client-secret",
        r"linked[_.\-]?in",
        "[a-z0-9]{16}",
        ("linkedin", "linked_in", "linked-in", "linked.in"),
    ),
    # "lob" alone is inside "global" and "blob": the name must be followed by a separator.
    _named(
        "lob-api-key",
        r"lob(?:[_.\-]|api|key|secret)",
        "(?:live|test)_[a-f0-9]{35}",
        ("lob_", "lob.", "lob-", "lobapi", "lobkey", "lobsecret"),
    ),
    _named(
        "lob-pub-api-key",
        r"lob(?:[_.\-]|pub)",
        "(?:test|live)_pub_[a-f0-9]{31}",
        ("lob_", "lob.", "lob-", "lobpub"),
    ),
    _vendor("looker-client-id", "looker", "[a-z0-9]{20}"),
    _vendor("looker-client-secret", "looker", "[a-z0-9]{24}"),
    _vendor("mailgun-signing-key", "mailgun", "[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}"),
    _vendor("mattermost-access-token", "mattermost", "[a-z0-9]{26}"),
    _named(
        "messagebird-api-token",
        r"message[_.\-]?bird",
        "[a-z0-9]{25}",
        ("messagebird", "message_bird", "message-bird", "message.bird"),
    ),
    _named(
        "messagebird-client-id",
        r"message[_.\-]?bird",
        _UUID,
        ("messagebird", "message_bird", "message-bird", "message.bird"),
    ),
    _vendor("netlify-access-token", "netlify", "[a-z0-9=_-]{40,46}"),
    _named(
        "new-relic-user-api-id",
        r"new[_.\-]?relic",
        "[a-z0-9]{64}",
        ("newrelic", "new_relic", "new-relic", "new.relic"),
    ),
    _named(
        "nytimes-access-token",
        "nytimes|new-york-times|newyorktimes",
        "[a-z0-9=_-]{32}",
        ("nytimes", "new-york-times", "newyorktimes"),
    ),
    _vendor("okta-access-token", "okta", r"00[\w=-]{40}"),
    _vendor("plaid-client-id", "plaid", "[a-z0-9]{24}"),
    _vendor("plaid-secret-key", "plaid", "[a-z0-9]{30}"),
    _named(
        "privateai-api-token",
        r"private[_.\-]?ai",
        _A32,
        ("privateai", "private_ai", "private-ai", "private.ai"),
    ),
    _vendor("rapidapi-access-token", "rapidapi", "[a-z0-9_-]{50}"),
    _vendor("sendbird-access-id", "sendbird", _UUID),
    _vendor("sendbird-access-token", "sendbird", "[a-f0-9]{40}"),
    _vendor("sentry-access-token", "sentry", "[a-f0-9]{64}"),
    _named(
        "sidekiq-secret",
        r"bundle[_\-](?:enterprise|gems)[_\-]{1,2}contribsys[_\-]{1,2}com",
        "[a-f0-9]{8}:[a-f0-9]{8}",
        ("bundle_enterprise_", "bundle_gems_", "bundle-enterprise-", "bundle-gems-"),
    ),
    _named("snyk-api-token", r"snyk[_.-]?(?:(?:api|oauth)[_.-]?)?(?:key|token)", _UUID, ("snyk",)),
    _named(
        "softlayer-api-key",
        r"(?:softlayer|sl)[_.\-]?(?:api)?[_.\-]?(?:key|pwd|password|pass|token)",
        "[a-z0-9]{64}",
        ("softlayer", "sl_", "sl-", "sl.", "slapi"),
    ),
    _named(
        "sonar-api-token", r"sonar[_.-]?(?:login|token)", "(?:squ_|sqp_|sqa_)?[a-z0-9=_-]{40}", ("sonar",)
    ),
    _vendor("sourcegraph-access-token-named", "sourcegraph", "[a-f0-9]{40}"),
    _vendor("squarespace-access-token", "squarespace", _UUID),
    _vendor("sumologic-access-id", "sumo", "su[a-z0-9]{12}"),
    _vendor("sumologic-access-token", "sumo", "[a-z0-9]{64}"),
    _vendor("travisci-access-token", "travis", "[a-z0-9]{22}"),
    _vendor("twitch-api-token", "twitch", "[a-z0-9]{30}"),
    _vendor("twitter-access-token", "twitter", "[0-9]{15,25}-[a-z0-9]{20,40}"),
    _vendor("twitter-access-secret", "twitter", "[a-z0-9]{45}"),
    _vendor("twitter-api-key", "twitter", "[a-z0-9]{25}"),
    _vendor("twitter-api-secret", "twitter", "[a-z0-9]{50}"),
    Rule("vault-service-token-legacy", ("vault", "token"), _vault_legacy_token),
    _vendor("yandex-access-token", "yandex", r"t1\.[a-z0-9_-]+=*\.[a-z0-9_-]{86}=*"),
    _vendor("yandex-aws-access-token", "yandex", "YC[a-z0-9_-]{38}"),
    _vendor("zendesk-secret-key", "zendesk", "[a-z0-9]{40}"),
)


# ---- families: key blocks, JWTs, credentials in URLs, command lines, headers ----------------------


def _private_key(text: str, position: int) -> Iterable[Span]:
    """A PEM private-key block from its BEGIN line to its END line; one cut off before its END line
    runs to the end of the text. `position` is where the rule's keyword `-----BEGIN ` starts."""
    header_end = text.find("-----", position + 11)
    label = text[position + 11 : header_end] if header_end >= 0 else ""
    if header_end < 0 or "\n" in label or not label.endswith(("PRIVATE KEY", "PRIVATE KEY BLOCK")):
        return _NONE
    limit = text.find(SEPARATOR, header_end)  # a text's block ends with the text
    limit = len(text) if limit < 0 else limit
    footer = text.find(f"-----END {label}-----", header_end, limit)
    return ((position, limit if footer < 0 else footer + len(label) + 14),)


_LINE_BREAK = r"(?:\r?\n|(?:\\+r)?\\+n)"  # a line break, or one JSON-escaped (once or more)
_PUTTY = re.compile(
    rf"Private-Lines:[ \t]*\d+((?:{_LINE_BREAK}[ \t]*[A-Za-z0-9+/=]+(?![A-Za-z0-9+/=:\-]))+"
    rf"(?:{_LINE_BREAK}[ \t]*Private-MAC:[ \t]*[0-9a-fA-F]+)?)"
)


def _putty_key(text: str, position: int) -> Iterable[Span]:
    match = _PUTTY.match(text, position)
    return (match.span(1),) if match else _NONE


_AWS_KEY_ID = re.compile(r"A[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_SHAPE = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_CONTEXT_CHARS = 200


def _aws_secret_near_key_id(text: str, position: int) -> Iterable[Span]:
    """40-character base64-ish strings only near an AKIA/ASIA key id (git SHAs are plain hex)."""
    key_id = _AWS_KEY_ID.match(text, position)
    if key_id is None or not starts_token(text, position):
        return _NONE
    # the context ends where a text ends (see redact_many)
    low = max(position - _AWS_CONTEXT_CHARS, text.rfind(SEPARATOR, 0, position) + 1, 0)
    high = key_id.end() + _AWS_CONTEXT_CHARS
    if (joint := text.find(SEPARATOR, key_id.end(), high)) >= 0:
        high = joint
    return [
        match.span()
        for match in _AWS_SECRET_SHAPE.finditer(text, low, high)
        if re.search(r"[A-Z/+]", match.group()) and re.search(r"[a-z0-9]", match.group())
    ]


_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_URI_USERINFO = re.compile(r"://[^\s/:@\"'<>\\]+:([^\s/\"'<>\\]+)@")
_CONNECTION_SCHEMES = re.compile(
    r"(?i)postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|oracle|couchbases?"
    r"|neo4j(?:\+s)?|cassandra|clickhouse|cockroachdb|snowflake"
)


def _scheme_start(text: str, position: int) -> int:
    """Where the URI scheme ending at `position` starts (`position` itself when there is none)."""
    start = position
    while start and text[start - 1] in _SCHEME_CHARS and not _escape_ends_at(text, start):
        start -= 1
    while start < position and not text[start].isalpha():
        start += 1
    return start


def _uri_credentials(connection: bool) -> Finder:
    """`scheme://user:password@`, the scheme read backwards from `://`."""

    def find(text: str, position: int) -> Iterable[Span]:
        match = _URI_USERINFO.match(text, position)
        if match is None:
            return _NONE
        start = _scheme_start(text, position)
        is_connection = bool(_CONNECTION_SCHEMES.fullmatch(text[start:position]))
        if start == position or is_connection != connection or match.group(1).startswith("$"):
            return _NONE
        return (match.span(1),)

    return find


_QUOTE = r"(?:\\*[\"'])"  # a quote, JSON-escaped once or more (a JSON string inside a tool call)
# a value that is not a reference to one (`$VAR`, `${{ secrets.X }}`, `<your-token>`, `os.environ`)
_CODE_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_NOT_SECRETS = frozenset(
    [
        *("enabled", "disabled", "true", "false", "none", "null", "nil", "undefined"),
        *("yes", "no", "on", "off", "required", "optional", "redacted"),
    ]
)


def secret_value(value: str) -> bool:
    bare = value.strip()
    return (
        len(bare) >= 8
        and not bare.replace(".", "", 1).replace("_", "").isdigit()
        and bare.lower() not in _NOT_SECRETS
        and not bare.startswith(("$", "[REDACTED", "{{", "<", "%(", "#{"))
        and not _CODE_REFERENCE.fullmatch(bare)
        and not _locator(bare)
    )


# A value that only says where a secret is kept (JM-REDACT-071): a path or URI of at least three
# names and two `/` (`op://Private/GitHub/credential`, `vault:secret/data/app#key`,
# `projects/1/secrets/db/versions/2`, `/run/secrets/db_password`). A name is a number, a word of at
# most three letters, or words (`personal`, `GitHub`, `KeyVault`, `API`) with up to three digits
# after them: each word has a vowel and no four consonants in a row, as generated text seldom does.
_LOCATOR_CHARS = re.compile(r"[A-Za-z0-9_.\-/:#@()=;]+")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_LETTERS_THEN_DIGITS = re.compile(r"([A-Za-z]+)\d{0,3}")
_WORD_PIECE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]")
_SPOKEN = re.compile(r"(?i)(?=.*[aeiouy])(?!.*[^aeiouy]{4})[a-z]{2,}|[A-Z]{2,}")


def _name_run(run: str) -> bool:
    if run.isdigit():
        return True
    letters = _LETTERS_THEN_DIGITS.fullmatch(run)
    if letters is None:
        return False
    word = letters.group(1)
    return len(word) <= 3 or all(_SPOKEN.fullmatch(piece) for piece in _WORD_PIECE.findall(word))


def _locator(value: str) -> bool:
    if value.count("/") < 2 or not _LOCATOR_CHARS.fullmatch(value):
        return False
    runs = _ALNUM_RUN.findall(value)
    return len(runs) >= 3 and all(_name_run(run) for run in runs)


_ESCAPED_VALUE = r'\\+"((?:[^"\\\n]|\\(?!\\*[nrt"]))*)\\+"'
_BARE_VALUE = r"((?:[^\s\"',;(){}\[\]\\<>]|\\(?!\\*[nrt\"]))+)"
_VALUE = rf"(?:{_ESCAPED_VALUE}|\"([^\"\n]*)\"|'([^'\n]*)'|{_BARE_VALUE})"
# `=`, `:`, `=>` ..., or only spaces before a quoted value (SQL's `PASSWORD 'v'`)
_OPERATOR = rf"{_QUOTE}?\s*(?:=>|:=|[:=>]|{_QUOTE}?\s+value\s*=|(?<=[ \t])(?=\\*[\"']))\s*"
_ASSIGNMENT = re.compile(
    r"(?i)(?:pass(?:w(?:or)?d|phrase)?(?![a-z])|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    rf"|auth(?!or)|credential)(?P<tail>[A-Za-z0-9_.\-]*){_OPERATOR}{_VALUE}"
)
# A word after the credential word that makes the name one of a setting about credentials, whose
# value is no secret: `secretName: db-credentials`, `token_url`, `API_KEY_HEADER`, `PASSWORD_HASHER`.
_QUALIFIED = re.compile(
    r"(?i).*(?:name|names|ref|id|ids|url|uri|endpoint|path|file|dir|header|method|type|hasher|algorithm"
    r"|length|ttl|expiry|expires|timeout|policy|field|prefix|env|var|mode|format|scope|provider|label"
    r"|cmd|command|eval)"
)


def _qualified(tail: str) -> bool:
    return bool(tail) and _QUALIFIED.fullmatch(tail) is not None


_GENERIC = re.compile(
    rf"(?i)(?:key|api|access|creds)[A-Za-z0-9_.\-]*{_OPERATOR}"
    rf"(?:\\*[\"'\x60])?([A-Za-z0-9_.=+/\-]{{10,150}}){_END}"
)


def _generic_value(value: str) -> bool:
    return (
        secret_value(value)
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= 3.5
        and not re.fullmatch(_UUID, value, re.IGNORECASE)
    )


def _in_substitution(text: str, position: int) -> bool:
    """Whether `position` is inside a command substitution (`$(…)`, backticks) opened on its line."""
    start = max(0, position - 512)
    line = text[text.rfind("\n", start, position) + 1 or start : position]
    return line.count("$(") > line.count(")") or line.count("\x60") % 2 == 1


def _names_a_secret(text: str, position: int, value: str) -> bool:
    """Whether `value`, found at `position`, is the name of a secret that a command fetches: words
    joined by `-`, `_` or `.` inside a command substitution (`$(gcloud secrets versions access
    latest --secret=django-key)`, `` `vault read -field=key secret/app` ``)."""
    return _word_like(value.rstrip(")")) and _in_substitution(text, position)


def _assignment(text: str, position: int) -> Iterable[Span]:
    if text[position : position + 4].lower() == "pass" and not _name_starts(text, position):
        return _NONE  # "bypass", "compass", "BYPASS" (but "dbPassword" and "DB_PASS" are key names)
    match = _ASSIGNMENT.match(text, position)
    if match is None or _qualified(match.group("tail")):
        return _NONE
    group = match.lastindex or 0
    if group == 5 and text.startswith("(", match.end()):
        return _NONE  # a bare value that is called is a function: `token = generate_token(user)`
    value = match.group(group)
    if not secret_value(value) or _names_a_secret(text, position, value):
        return _NONE
    return (match.span(group),)


# A credential name and a generated-looking value in the other ways text puts them side by side: a
# Markdown table (`| TOKEN | v |`), CSV, a call's arguments (`("TOKEN", "v")`), a Dockerfile's
# `ENV TOKEN v`, `TOKEN ??= v`, prose (`TOKEN to v`), or a name only a value of this shape makes
# recognisable (`AZURE_DEVOPS_EXT_PAT=v`).
_KEYED_NAME = (
    r"(?i)(?:key|token|secret|pass(?:w(?:or)?d)?|pwd|pat|credentials?|auth)(?P<tail>[A-Za-z0-9_.\-]{0,30})"
)
_KEYED_VALUE = rf"(?:\\*[\"'\x60])?([A-Za-z0-9+/=_~\-][A-Za-z0-9+/=_.~\-]{{15,999}}){_END}"
_KEYED = re.compile(
    rf"{_KEYED_NAME}(?:\\*[\"'\x60])?"
    r"(?:[ \t]*[|,=:][ \t]*|[ \t]*(?:\?\?|\|\|)=[ \t]*|[ \t]+value[ \t]*=[ \t]*)"
    rf"{_KEYED_VALUE}"
)
# only an environment-style name stands apart from its value (`ENV TOKEN v`, `TOKEN to v`)
_KEYED_SPACED = re.compile(rf"{_KEYED_NAME}(?:[ \t]+to)?[ \t]+{_KEYED_VALUE}")


def _generated(value: str) -> bool:
    """A value that looks generated: long, letters and digits mixed, not words."""
    bare = value.rstrip(".")
    classes = sum(
        (any(c.islower() for c in bare), any(c.isupper() for c in bare), any(c.isdigit() for c in bare))
    )
    return (
        len(bare) >= 16
        and classes >= 2
        and not _word_like(bare)
        and entropy(bare) >= 3.0
        and secret_value(bare)
    )


def _name_starts(text: str, position: int) -> bool:
    """Whether a credential word starts a part of a name here: after a non-letter, or as the
    capitalised part of a camelCase name (`AccountKey`, but not `monkey`)."""
    before = text[position - 1] if position else " "
    return not before.isalpha() or (text[position].isupper() and before.islower())


def _keyed_value(text: str, position: int) -> Iterable[Span]:
    if not _name_starts(text, position):
        return _NONE  # checked first: most hits are inside words (`monkey`, `compass`)
    match = _KEYED.match(text, position)
    if match is None and text[position].isupper():
        match = _KEYED_SPACED.match(text, position)
        if match is not None and not text[position : match.end("tail")].isupper():
            match = None
    if match is None or _qualified(match.group("tail")) or not _generated(match.group(2)):
        return _NONE
    start = match.start(2)
    return ((start, start + len(match.group(2).rstrip("."))),)


# .netrc's words stand apart by spaces or line breaks, plain or JSON-escaped (`\n` in a tool call)
_NETRC_GAP = r"(?:[ \t\r\n]|\\+[nrt])+"
_NETRC = re.compile(
    rf"machine{_NETRC_GAP}[^\s\\]+(?:{_NETRC_GAP}login{_NETRC_GAP}[^\s\\]+)?{_NETRC_GAP}password{_NETRC_GAP}([^\s\\]+)"
)
_IDENTIFIED_BY = re.compile(r"(?i)identified[ \t]+by[ \t]+\\*[\"'\x60]([^\"'\x60\\\n]+)")


# `-u` anywhere in the command, which `\` at a line's end continues on the next line
_CURL_USER = re.compile(
    rf"(?i)curl\b(?:\\\r?\n|[^\n])*?\s(?:-u\s*|--user(?:\s+|=)){_QUOTE}?[^\s\"':\\]*:([^\s\"'\\]+)"
)
_HEADER_VALUE = r"([^\s\"',;\\]{8,})"
_COOKIE = re.compile(r"(?i)(?:set-)?cookie:[ \t]*((?:[^\r\n\\]|\\(?![nr]))*)")
_COOKIE_PAIR = re.compile(r"([\w.\-]+)=([^;\s\"\\]+)")


def _cookie(text: str, position: int) -> Iterable[Span]:
    """Values of a Cookie or Set-Cookie header that look like session ids."""
    match = _COOKIE.match(text, position)
    assert match is not None  # the rule is tried only where its keyword `cookie:` starts, so it matches
    start = match.start(1)
    return [
        (start + pair.start(2), start + pair.end(2))
        for pair in _COOKIE_PAIR.finditer(match.group(1))
        if len(pair.group(2)) >= 16 and _looks_random(pair.group(2))
    ]


_QUERY_NAME = r"[\w.\-]*(?:token|sig|signature|key|secret|password|passwd|pwd|auth|credential)"
_QUERY = re.compile(rf"(?i)[?&;]{_QUERY_NAME}=([^&;\s\"'#\\<>]{{8,}})")
_QUERY_KEYWORDS = ("token=", "sig=", "signature=", "key=", "secret=", "password=", "passwd=", "pwd=", "auth=")


def _url_query(text: str, position: int) -> Iterable[Span]:
    """A query parameter named like a credential: `?access_token=`, `&sig=`, `X-Amz-Signature=`."""
    start = position
    while start and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    if not start:
        return _NONE
    match = _QUERY.match(text, start - 1)
    if match is None or match.start(1) < position or not secret_value(match.group(1)):
        return _NONE
    return (match.span(1),)


_CLI_FLAG = re.compile(
    r"--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token|access-token)"
    r"(?:=|[ \t]+)"
    rf"{_QUOTE}?([^\s\"'\\]{{8,}})"
)


def _cli_secret_flag(text: str, position: int) -> Iterable[Span]:
    """A secret flag's value; in a command that fetches a secret (`$(gcloud secrets versions access
    latest --secret=django-key)`), a value of words joined by `-`, `_` or `.` names the secret."""
    match = _CLI_FLAG.match(text, position)
    if match is None or _names_a_secret(text, position, match.group(1)):
        return _NONE
    return (match.span(1),)


_SHORT_PASSWORD = re.compile(rf" -p(?:[ \t]+)?{_QUOTE}?([^\s\"'\\\-][^\s\"'\\]{{7,}})")


def _short_password(text: str, position: int) -> Iterable[Span]:
    """`mysql -pS3cret` and `-p S3cret`: only values that look generated (not a port or a path)."""
    match = _SHORT_PASSWORD.match(text, position)
    if match is None or not _looks_random(match.group(1)) or not secret_value(match.group(1)):
        return _NONE
    return (match.span(1),)


_K8S_KIND = re.compile(r"kind:[ \t]*[\"']?secret\b")
_K8S_DATA = re.compile(rf"(?:string)?data:[ \t]*(?={_LINE_BREAK})")
_K8S_ITEM = re.compile(
    rf"{_LINE_BREAK}[ \t]+[\w.\-]+:[ \t]*(?:\\?[\"'])?([A-Za-z0-9+/=_.\-]*)(?:\\?[\"'])?[ \t]*"
)


def _kubernetes_secret(text: str, position: int) -> Iterable[Span]:
    """The values under `data:` / `stringData:` of a manifest whose kind is Secret."""
    if not _K8S_DATA.match(text, position):
        return _NONE
    around = text[max(0, position - 300) : position + 2000].lower()
    if not _K8S_KIND.search(around):
        return _NONE
    spans: list[Span] = []
    cursor = text.index(":", position) + 1
    while item := _K8S_ITEM.match(text, cursor):
        if len(item.group(1)) >= 8:
            spans.append(item.span(1))
        cursor = item.end()
    return spans


_FAMILIES = (
    Rule("private-key", ("-----BEGIN ",), _private_key, case_sensitive=True, whole=True),
    Rule("putty-private-key", ("Private-Lines:",), _putty_key, case_sensitive=True),
    Rule(
        "jwt",
        ("eyJ",),
        _pattern(r"(eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.(?:[A-Za-z0-9_\-]{8,})?)"),
        case_sensitive=True,
    ),
    _named(
        "aws-secret",
        r"secret[_.\-]?access[_.\-]?key|aws_secret_key",
        r"[a-z0-9/+=]{40}",
        ("secret_access_key", "secret-access-key", "secret.access.key", "secretaccesskey", "aws_secret_key"),
    ),
    Rule("aws-secret", ("AKIA", "ASIA"), _aws_secret_near_key_id, case_sensitive=True),
    Rule(
        "azure-storage-account-key",
        ("accountkey=", "sharedaccesskey="),
        _pattern(r"(?i)(?:accountkey|sharedaccesskey)=([A-Za-z0-9+/=]{20,})"),
    ),
    Rule("connection-string", ("://",), _uri_credentials(connection=True)),
    Rule(
        "connection-string",
        ("password=", "pwd=", "password =", "pwd ="),
        _pattern(r"(?i)(?:password|pwd)\s*=\s*([^;\r\n\"'\\]{1,200});"),
    ),
    Rule("url-userinfo", ("://",), _uri_credentials(connection=False)),
    Rule("url-query-secret", _QUERY_KEYWORDS, _url_query),
    Rule("curl-auth-user", ("curl",), _pattern(_CURL_USER.pattern, accept=lambda value: secret_value(value))),
    Rule("auth-header", ("bearer",), _pattern(r"(?i)bearer\s+([A-Za-z0-9._~+/=\-]{8,})")),
    Rule(
        "auth-header",
        ("authorization",),
        _pattern(
            rf"(?i)authorization{_QUOTE}?\s*[:=]\s*{_QUOTE}?(?:[A-Za-z0-9-]+\s+)?([^\s\"',;\\]{{8,}})",
            accept=lambda value: secret_value(value) and (_looks_random(value) or len(value) >= 24),
        ),
    ),
    Rule(
        "api-key-header",
        ("x-api-key", "api-key:", "x-auth-token", "private-token", "x-access-token"),
        _pattern(
            rf"(?i)(?:x-api-key|api-key|x-auth-token|private-token|x-access-token){_QUOTE}?:\s*{_QUOTE}?{_HEADER_VALUE}"
        ),
    ),
    Rule("cookie", ("cookie:",), _cookie),
    Rule(
        "cli-secret-flag",
        (
            "--pass",
            "--token",
            "--api-key",
            "--apikey",
            "--secret",
            "--client-secret",
            "--auth-token",
            "--access-token",
        ),
        _cli_secret_flag,
    ),
    Rule("cli-secret-flag", (" -p",), _short_password, case_sensitive=True),
    Rule("kubernetes-secret-yaml", ("data:",), _kubernetes_secret),
    Rule(
        "nuget-config-password",
        ("<add key=",),
        _pattern(r'(?i)<add key=\\*"(?:ClearText)?Password\\*"\s*value=\\*"([^"\\]{8,})'),
    ),
)

_GENERIC_RULES = (
    Rule(
        "assignment",
        (
            "pass",
            "pwd",
            "secret",
            "token",
            "auth",
            "credential",
            "api_key",
            "api-key",
            "apikey",
            "access_key",
            "access-key",
            "accesskey",
            "private_key",
            "private-key",
            "privatekey",
        ),
        _assignment,
    ),
    Rule(
        "generic-api-key",
        ("key", "api", "access", "creds"),
        _pattern(_GENERIC.pattern, accept=_generic_value),
    ),
    Rule(
        "keyed-value",
        ("key", "token", "secret", "pass", "pwd", "pat", "credential", "auth"),
        _keyed_value,
    ),
    Rule("netrc-password", ("machine",), _pattern(_NETRC.pattern, accept=secret_value)),
    Rule("sql-password", ("identified",), _pattern(_IDENTIFIED_BY.pattern, accept=secret_value)),
)

RULES: tuple[Rule, ...] = (*_VENDOR_TOKENS, *_VENDOR_NAMED, *_FAMILIES, *_GENERIC_RULES)
