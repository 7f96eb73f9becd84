"""The held-out secrets corpus (`heldout.json`): examples written apart from the tuned corpus.

The main corpus (`_kinds.py`, `_carriers.py`) and the redactor were built from the same notes, so
its recall says little about formats nobody wrote down for it. This set was written separately,
from the public descriptions of each format (the providers' token documentation, gitleaks' rule
test cases and detect-secrets' plugin descriptions: facts only, every example written here), with
its own value maker and in carriers the main corpus does not use: source code of several languages,
Dockerfiles and compose files, INI, `.netrc` and `.pgpass`, SQL, Markdown, log lines, CSV, diffs,
doubly escaped JSON, response bodies, form posts, PowerShell, CI workflows, HCL, HTML and prose in
other scripts. Its figures were first measured before any rule was changed for it.

Each format says where it comes from (`source`): a gitleaks default rule, a detect-secrets plugin,
or `provider:<name>` for a documented format that neither of them names. The JSON has the main
corpus' shape, so `load(HELDOUT_PATH)` reads it; its secrets name no marker class (`classes` is
empty: any `[REDACTED:<rule>]` marker is right), since naming the rule is tuned, recall is not.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._generate import draw_lookalikes

__all__ = ["HELDOUT_SEED", "generate_heldout"]

HELDOUT_SEED = 4242
_SECRETS_PER_FORMAT = 2
_CARRIERS_PER_SECRET = 3
_VERSION = 1

_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase
_DIGITS = string.digits
_ALNUM = _LOWER + _UPPER + _DIGITS
_HEX = _DIGITS + "abcdef"
_URLSAFE = _ALNUM + "-_"
_BASE64 = _ALNUM + "+/"

Make = Callable[[random.Random], str]


def _chars(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


def _run(prefix: str, *parts: str | tuple[str, int | tuple[int, int]]) -> Make:
    """A value: `prefix`, then each part: a literal string, or (alphabet, length or (low, high))
    for that many characters of the alphabet."""

    def make(rng: random.Random) -> str:
        out = [prefix]
        for part in parts:
            if isinstance(part, str):
                out.append(part)
                continue
            alphabet, length = part
            count = rng.randint(*length) if isinstance(length, tuple) else length
            out.append(_chars(rng, alphabet, count))
        return "".join(out)

    return make


def _joined(*makers: Make) -> Make:
    return lambda rng: "".join(make(rng) for make in makers)


def _literal(text: str) -> Make:
    return lambda rng: text


@dataclass(frozen=True)
class Format:
    id: str
    source: str
    make: Make
    prefix: str = ""  # the literal, public start of the format
    name: str = ""  # the key name it goes under, when only a name makes it recognisable
    password: bool = False  # a password: it also sits where passwords go (.netrc, SQL, .pgpass)
    block: bool = False  # a multi-line block (a key file)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(rng: random.Random) -> str:
    header = {"typ": "JWT", "alg": rng.choice(["HS512", "RS256", "EdDSA"])}
    claims = {
        "iss": "https://auth.example.org",
        "aud": _chars(rng, _LOWER, 6),
        "exp": rng.randint(1_700_000_000, 1_900_000_000),
        "scope": "read write",
    }
    parts = [_b64url(json.dumps(part).encode()) for part in (header, claims)]
    return ".".join([*parts, _b64url(rng.randbytes(rng.choice([32, 64, 256])))])


def _key_block(label: str) -> Make:
    def make(rng: random.Random) -> str:
        body = base64.b64encode(rng.randbytes(rng.randint(180, 360))).decode()
        lines = [body[i : i + 70] for i in range(0, len(body), 70)]
        return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])

    return make


def _pgp_block(rng: random.Random) -> str:
    body = base64.b64encode(rng.randbytes(240)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join(
        [
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "",
            *lines,
            "=" + _chars(rng, _BASE64, 4),
            "-----END PGP PRIVATE KEY BLOCK-----",
        ]
    )


def _discord_bot(rng: random.Random) -> str:
    user_id = str(rng.randint(10**17, 10**19 - 1)).encode()
    return ".".join(
        [base64.b64encode(user_id).decode().rstrip("="), _chars(rng, _URLSAFE, 6), _chars(rng, _URLSAFE, 38)]
    )


def _telegram(rng: random.Random) -> str:
    return f"{rng.randint(10**8, 10**10)}:AA{_chars(rng, _URLSAFE, 33)}"


def _password(rng: random.Random) -> str:
    words = ["Maple", "river", "Quartz", "otter", "Falcon", "copper", "Nimbus", "tulip"]
    return rng.choice(
        [
            rng.choice(words) + _chars(rng, _DIGITS, 2) + rng.choice("!#%&*") + rng.choice(words).lower(),
            _chars(rng, _ALNUM + "!#%*+-", rng.randint(14, 22)),
        ]
    )


def _azure_storage(rng: random.Random) -> str:
    return base64.b64encode(rng.randbytes(64)).decode()


def _aws_pair(rng: random.Random) -> str:
    return _chars(rng, _ALNUM + "+/", 40)


# Formats that a scanner catches by their own shape.
_BARE: tuple[Format, ...] = (
    Format("github-classic-pat", "gitleaks:github-pat", _run("ghp_", (_ALNUM, 36)), "ghp_"),
    Format(
        "github-fine-grained-pat",
        "gitleaks:github-fine-grained-pat",
        _run("github_pat_", (_ALNUM, 22), "_", (_ALNUM, 59)),
        "github_pat_",
    ),
    Format("github-actions-token", "gitleaks:github-app-token", _run("ghs_", (_ALNUM, 36)), "ghs_"),
    Format("github-oauth-token", "gitleaks:github-oauth", _run("gho_", (_ALNUM, 36)), "gho_"),
    Format("gitlab-pat-legacy", "gitleaks:gitlab-pat", _run("glpat-", (_URLSAFE, 20)), "glpat-"),
    # the versioned routable form: payload, `.` two-character version `.`, length and CRC
    Format(
        "gitlab-pat-routable-versioned",
        "gitleaks:gitlab-pat-routable",
        _run("glpat-", (_URLSAFE, (36, 54)), ".01.", (_LOWER + _DIGITS, 9)),
        "glpat-",
    ),
    Format(
        "gitlab-runner-routable",
        "gitleaks:gitlab-runner-authentication-token-routable",
        _run("glrt-t2_", (_URLSAFE, 27), ".", (_LOWER + _DIGITS, 9)),
        "glrt-",
    ),
    Format("gitlab-deploy-token", "gitleaks:gitlab-deploy-token", _run("gldt-", (_URLSAFE, 20)), "gldt-"),
    Format(
        "slack-bot-token",
        "gitleaks:slack-bot-token",
        _run("xoxb-", (_DIGITS, 12), "-", (_DIGITS, 13), "-", (_ALNUM, 24)),
        "xoxb-",
    ),
    Format(
        "slack-user-token",
        "gitleaks:slack-user-token",
        _run("xoxp-", (_DIGITS, 11), "-", (_DIGITS, 12), "-", (_DIGITS, 13), "-", (_HEX, 32)),
        "xoxp-",
    ),
    Format(
        "slack-app-token",
        "gitleaks:slack-app-token",
        _run("xapp-1-A", (_UPPER + _DIGITS, 10), "-", (_DIGITS, 13), "-", (_HEX, 64)),
        "xapp-",
    ),
    Format(
        "slack-webhook",
        "gitleaks:slack-webhook-url",
        _run(
            "https://hooks.slack.com/services/T",
            (_UPPER + _DIGITS, 10),
            "/B",
            (_UPPER + _DIGITS, 10),
            "/",
            (_ALNUM, 24),
        ),
        "https://hooks.slack.com/services/",
    ),
    Format("stripe-live-secret", "gitleaks:stripe-access-token", _run("sk_live_", (_ALNUM, 99)), "sk_live_"),
    Format("stripe-restricted", "gitleaks:stripe-access-token", _run("rk_live_", (_ALNUM, 24)), "rk_live_"),
    Format("stripe-test-secret", "gitleaks:stripe-access-token", _run("sk_test_", (_ALNUM, 51)), "sk_test_"),
    Format(
        "openai-project-key",
        "gitleaks:openai-api-key",
        _run("sk-proj-", (_URLSAFE, 74), "T3BlbkFJ", (_URLSAFE, 74)),
        "sk-proj-",
    ),
    Format(
        "openai-service-account-key",
        "gitleaks:openai-api-key",
        _run("sk-svcacct-", (_URLSAFE, 64), "T3BlbkFJ", (_URLSAFE, 64)),
        "sk-svcacct-",
    ),
    Format(
        "anthropic-api-key",
        "gitleaks:anthropic-api-key",
        _run("sk-ant-api03-", (_URLSAFE, 93), "AA"),
        "sk-ant-api03-",
    ),
    Format("aws-access-key-id", "gitleaks:aws-access-token", _run("AKIA", ("234567" + _UPPER, 16)), "AKIA"),
    Format(
        "aws-temporary-key-id", "gitleaks:aws-access-token", _run("ASIA", ("234567" + _UPPER, 16)), "ASIA"
    ),
    Format("google-api-key", "gitleaks:gcp-api-key", _run("AIzaSy", (_URLSAFE, 33)), "AIza"),
    Format("npm-token", "gitleaks:npm-access-token", _run("npm_", (_ALNUM, 36)), "npm_"),
    Format(
        "pypi-token",
        "gitleaks:pypi-upload-token",
        _run("pypi-AgEIcHlwaS5vcmcCJD", (_URLSAFE, (120, 180))),
        "pypi-AgEIcHlwaS5vcmc",
    ),
    Format(
        "huggingface-token", "gitleaks:huggingface-access-token", _run("hf_", (_LOWER + _UPPER, 34)), "hf_"
    ),
    Format(
        "sendgrid-key",
        "gitleaks:sendgrid-api-token",
        _run("SG.", (_URLSAFE, 22), ".", (_URLSAFE, 43)),
        "SG.",
    ),
    Format("twilio-api-key", "gitleaks:twilio-api-key", _run("SK", (_HEX, 32)), "SK"),
    Format("mailgun-key", "gitleaks:mailgun-private-api-token", _run("key-", (_HEX, 32)), "key-"),
    Format(
        "mailchimp-key",
        "gitleaks:mailchimp-api-key",
        _joined(_run("", (_HEX, 32)), _literal("-us"), _run("", (_DIGITS, (1, 2)))),
    ),
    Format("shopify-admin-token", "gitleaks:shopify-access-token", _run("shpat_", (_HEX, 32)), "shpat_"),
    Format("shopify-shared-secret", "gitleaks:shopify-shared-secret", _run("shpss_", (_HEX, 32)), "shpss_"),
    Format("digitalocean-pat", "gitleaks:digitalocean-pat", _run("dop_v1_", (_HEX, 64)), "dop_v1_"),
    Format("heroku-api-key", "gitleaks:heroku-api-key-v2", _run("HRKU-AA", (_URLSAFE, 58)), "HRKU-"),
    Format("doppler-personal-token", "gitleaks:doppler-api-token", _run("dp.pt.", (_ALNUM, 43)), "dp.pt."),
    Format("linear-key", "gitleaks:linear-api-key", _run("lin_api_", (_ALNUM, 40)), "lin_api_"),
    Format(
        "postman-key",
        "gitleaks:postman-api-token",
        _run("PMAK-", (_HEX, 24), "-", (_HEX, 34)),
        "PMAK-",
    ),
    Format("databricks-token", "gitleaks:databricks-api-token", _run("dapi", (_HEX, 32)), "dapi"),
    Format(
        "dynatrace-token",
        "gitleaks:dynatrace-api-token",
        _run("dt0c01.", (_UPPER + _DIGITS, 24), ".", (_UPPER + _DIGITS, 64)),
        "dt0c01.",
    ),
    Format(
        "newrelic-user-key", "gitleaks:new-relic-user-api-key", _run("NRAK-", (_UPPER + _DIGITS, 27)), "NRAK-"
    ),
    Format(
        "grafana-service-account",
        "gitleaks:grafana-service-account-token",
        _run("glsa_", (_ALNUM, 32), "_", (_HEX, 8)),
        "glsa_",
    ),
    Format(
        "atlassian-token",
        "gitleaks:atlassian-api-token",
        _run("ATATT3xFfGF0", (_URLSAFE, 171), "=", (_HEX.upper(), 8)),
        "ATATT3",
    ),
    Format("notion-token", "gitleaks:notion-api-token", _run("ntn_", (_DIGITS, 11), (_ALNUM, 35)), "ntn_"),
    Format("vault-service-token", "gitleaks:vault-service-token", _run("hvs.", (_URLSAFE, 95)), "hvs."),
    Format(
        "terraform-cloud-token",
        "gitleaks:hashicorp-tf-api-token",
        _run("", (_ALNUM, 14), ".atlasv1.", (_ALNUM, 67)),
    ),
    Format("pulumi-token", "gitleaks:pulumi-api-token", _run("pul-", (_HEX, 40)), "pul-"),
    Format(
        "age-identity",
        "gitleaks:age-secret-key",
        _run("AGE-SECRET-KEY-1", ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        "AGE-SECRET-KEY-1",
    ),
    Format("telegram-bot", "gitleaks:telegram-bot-api-token", _telegram),
    Format("discord-bot", "gitleaks:discord-api-token", _discord_bot),
    Format(
        "onepassword-secret-key",
        "gitleaks:1password-secret-key",
        _run(
            "A3-",
            (_UPPER + _DIGITS, 6),
            "-",
            (_UPPER + _DIGITS, 6),
            "-",
            (_UPPER + _DIGITS, 5),
            "-",
            (_UPPER + _DIGITS, 5),
            "-",
            (_UPPER + _DIGITS, 5),
            "-",
            (_UPPER + _DIGITS, 5),
        ),
        "A3-",
    ),
    Format(
        "azure-ad-secret",
        "gitleaks:azure-ad-client-secret",
        _run("", (_ALNUM, 3), (_DIGITS, 1), "Q~", (_ALNUM + "_~.-", 34)),
    ),
    Format("sentry-user-token", "gitleaks:sentry-user-token", _run("sntryu_", (_HEX, 64)), "sntryu_"),
    Format(
        "planetscale-token",
        "gitleaks:planetscale-api-token",
        _run("pscale_tkn_", (_URLSAFE, 43)),
        "pscale_tkn_",
    ),
    Format("square-token", "gitleaks:square-access-token", _run("EAAA", (_URLSAFE, 60)), "EAAA"),
    Format(
        "flutterwave-secret",
        "gitleaks:flutterwave-secret-key",
        _run("FLWSECK-", (_HEX, 32), "-X"),
        "FLWSECK-",
    ),
    Format("alibaba-key-id", "gitleaks:alibaba-access-key-id", _run("LTAI", (_ALNUM, 20)), "LTAI"),
    Format("flyio-token", "gitleaks:flyio-access-token", _run("fo1_", (_URLSAFE, 43)), "fo1_"),
    Format("rubygems-key", "gitleaks:rubygems-api-token", _run("rubygems_", (_HEX, 48)), "rubygems_"),
    Format("prefect-key", "gitleaks:prefect-api-token", _run("pnu_", (_ALNUM, 36)), "pnu_"),
    Format("jwt", "gitleaks:jwt", _jwt, "eyJ"),
    Format("openssh-private-key", "gitleaks:private-key", _key_block("OPENSSH PRIVATE KEY"), block=True),
    Format("ec-private-key", "detect-secrets:PrivateKeyDetector", _key_block("EC PRIVATE KEY"), block=True),
    Format("encrypted-pkcs8", "gitleaks:private-key", _key_block("ENCRYPTED PRIVATE KEY"), block=True),
    Format("pgp-private-key", "gitleaks:private-key", _pgp_block, block=True),
    # Documented formats that neither gitleaks' default rules nor detect-secrets name.
    Format("docker-hub-pat", "provider:docker-hub", _run("dckr_pat_", (_URLSAFE, 27)), "dckr_pat_"),
    Format("stripe-webhook-secret", "provider:stripe-webhooks", _run("whsec_", (_ALNUM, 32)), "whsec_"),
    Format("replicate-token", "provider:replicate", _run("r8_", (_ALNUM, 37)), "r8_"),
    Format("groq-key", "provider:groq", _run("gsk_", (_ALNUM, 52)), "gsk_"),
    Format("xai-key", "provider:xai", _run("xai-", (_ALNUM, 80)), "xai-"),
    Format("supabase-access-token", "provider:supabase", _run("sbp_", (_HEX, 40)), "sbp_"),
    Format("supabase-secret-key", "provider:supabase", _run("sb_secret_", (_URLSAFE, 31)), "sb_secret_"),
    Format("netlify-pat", "provider:netlify", _run("nfp_", (_ALNUM, 40)), "nfp_"),
    Format("figma-pat", "provider:figma", _run("figd_", (_URLSAFE, 40)), "figd_"),
    Format("buildkite-token", "provider:buildkite", _run("bkua_", (_HEX, 40)), "bkua_"),
    Format(
        "anthropic-oauth-token",
        "provider:anthropic",
        _run("sk-ant-oat01-", (_URLSAFE, 93), "AA"),
        "sk-ant-oat01-",
    ),
    Format("google-oauth-client-secret", "provider:google-oauth", _run("GOCSPX-", (_URLSAFE, 28)), "GOCSPX-"),
    Format("google-oauth-access-token", "provider:google-oauth", _run("ya29.a0", (_URLSAFE, 150)), "ya29."),
    Format(
        "discord-webhook",
        "provider:discord-webhooks",
        _run("https://discord.com/api/webhooks/", (_DIGITS, 19), "/", (_URLSAFE, 68)),
        "https://discord.com/api/webhooks/",
    ),
    Format(
        "braintree-access-token",
        "provider:braintree",
        _run("access_token$production$", (_LOWER + _DIGITS, 16), "$", (_HEX, 32)),
        "access_token$production$",
    ),
)

# Formats only their key name makes recognisable.
_NAMED: tuple[Format, ...] = (
    Format("datadog-api-key", "gitleaks:datadog-access-token", _run("", (_HEX, 32)), name="DD_API_KEY"),
    Format(
        "cloudflare-api-token",
        "gitleaks:cloudflare-api-key",
        _run("", (_URLSAFE, 40)),
        name="CLOUDFLARE_API_TOKEN",
    ),
    Format("heroku-legacy-key", "gitleaks:heroku-api-key", lambda rng: _uuid(rng), name="HEROKU_API_KEY"),
    Format("twilio-auth-token", "gitleaks:twilio-api-key", _run("", (_HEX, 32)), name="TWILIO_AUTH_TOKEN"),
    Format("okta-api-token", "gitleaks:okta-access-token", _run("00", (_URLSAFE, 40)), name="OKTA_API_TOKEN"),
    Format(
        "azure-devops-pat",
        "provider:azure-devops",
        _run("", (_LOWER + "234567", 52)),
        name="AZURE_DEVOPS_EXT_PAT",
    ),
    Format("algolia-admin-key", "gitleaks:algolia-api-key", _run("", (_HEX, 32)), name="ALGOLIA_ADMIN_KEY"),
    Format(
        "sentry-auth-token", "gitleaks:sentry-access-token", _run("", (_HEX, 64)), name="SENTRY_AUTH_TOKEN"
    ),
    Format(
        "launchdarkly-sdk-key",
        "gitleaks:launchdarkly-access-token",
        lambda rng: "sdk-" + _uuid(rng),
        name="LD_SDK_KEY",
    ),
    Format(
        "mapbox-secret",
        "gitleaks:mapbox-api-token",
        lambda rng: "sk.eyJ1Ijoi" + _chars(rng, _ALNUM, 60) + "." + _chars(rng, _URLSAFE, 22),
        "sk.eyJ",
        name="MAPBOX_SECRET_TOKEN",
    ),
    Format("aws-secret-access-key", "gitleaks:aws-access-token", _aws_pair, name="aws_secret_access_key"),
    Format(
        "aws-session-token",
        "provider:aws-sts",
        _run("IQoJb3JpZ2luX2VjE", (_BASE64, (300, 400))),
        name="AWS_SESSION_TOKEN",
    ),
    Format("azure-storage-key", "provider:azure-storage", _azure_storage, name="AccountKey"),
    Format("jwt-signing-secret", "detect-secrets:KeywordDetector", _run("", (_ALNUM, 48)), name="JWT_SECRET"),
    Format("session-secret", "gitleaks:generic-api-key", _run("", (_HEX, 64)), name="SESSION_SECRET"),
    Format("client-secret", "gitleaks:generic-api-key", _run("", (_URLSAFE, 40)), name="client_secret"),
    Format("signing-key", "gitleaks:generic-api-key", _run("", (_BASE64, 44)), name="SIGNING_KEY"),
    Format("encryption-key", "gitleaks:generic-api-key", _run("", (_HEX, 64)), name="encryption_key"),
    Format("db-password", "detect-secrets:KeywordDetector", _password, name="DB_PASSWORD", password=True),
    Format(
        "admin-password", "detect-secrets:KeywordDetector", _password, name="admin_password", password=True
    ),
    Format("smtp-password", "detect-secrets:KeywordDetector", _password, name="SMTP_PASS", password=True),
    Format(
        "redis-password", "detect-secrets:KeywordDetector", _password, name="REDIS_PASSWORD", password=True
    ),
)


def _uuid(rng: random.Random) -> str:
    digits = _chars(rng, _HEX, 32)
    return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-{rng.choice('89ab')}{digits[17:20]}-{digits[20:]}"


# ---- carriers ----------------------------------------------------------------------------------
# Each takes (rng, format, value) and gives the text the value is planted in, or None when the value
# cannot sit there. Bare formats sit under names with no credential word in them.

_PLAIN_NAMES = ("upstream", "release_ref", "ciValue", "stage_value", "buildInfo")
Carrier = Callable[[random.Random, Format, str], "str | None"]


def _key(rng: random.Random, fmt: Format) -> str:
    return fmt.name or rng.choice(_PLAIN_NAMES)


def _one_line(fmt: Format, value: str) -> bool:
    return not fmt.block and "\n" not in value


def _python(rng: random.Random, fmt: Format, value: str) -> str | None:
    if fmt.block:
        return f'DEPLOY_KEY = """\\\n{value}\n"""\n'
    if fmt.name:
        return rng.choice(
            [
                f'os.environ.setdefault("{fmt.name}", "{value}")',
                f"settings = dict({fmt.name.lower()}='{value}')",
            ]
        )
    return rng.choice([f'client = Client("{value}", timeout=30)', f"STAGE = '{value}'  # TODO move to vault"])


def _javascript(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    key = _key(rng, fmt)
    return rng.choice(
        [f"const cfg = {{ {key}: '{value}', retries: 3 }};", f"process.env.{key.upper()} ??= `{value}`;"]
    )


def _go(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    field = "".join(part.capitalize() for part in _key(rng, fmt).lower().split("_"))
    return rng.choice([f'\tcfg := Config{{\n\t\t{field}: "{value}",\n\t}}', f"var {field} = `{value}`"])


def _dockerfile(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    key = _key(rng, fmt).upper()
    return rng.choice(
        [f"FROM python:3.12-slim\nENV {key}={value}\nRUN pip install -r req.txt", f"ENV {key} {value}"]
    )


def _compose(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    key = _key(rng, fmt).upper()
    return (
        "services:\n  api:\n    image: api:latest\n    environment:\n"
        f"      - {key}={value}\n      - LOG_LEVEL=info"
    )


def _ini(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    section = rng.choice(["default", "prod", "service"])
    return f"[{section}]\nregion = eu-west-1\n{_key(rng, fmt).lower()} = {value}"


def _netrc(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value) or (fmt.name and not fmt.password):
        return None
    return f"machine {rng.choice(['api.example.net', 'git.example.org'])} login deploybot password {value}"


def _pgpass(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not fmt.password or ":" in value:
        return None
    return f"db.example.internal:5432:orders:svc_orders:{value}"


def _sql(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value) or "'" in value:
        return None
    if fmt.password:
        return rng.choice(
            [
                f"ALTER USER svc_orders WITH PASSWORD '{value}';",
                f"CREATE USER 'app'@'%' IDENTIFIED BY '{value}';",
            ]
        )
    return f"INSERT INTO integrations (owner, kind, value) VALUES ('ci', '{_key(rng, fmt)}', '{value}');"


def _markdown(rng: random.Random, fmt: Format, value: str) -> str | None:
    if fmt.block:
        return f"Here is the key I generated:\n\n```\n{value}\n```\n"
    if fmt.name:
        return f"| variable | value |\n|---|---|\n| `{fmt.name}` | `{value}` |"
    return rng.choice([f"Use `{value}` for the staging run.", f"| staging | {value} | expires Friday |"])


def _logfmt(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    key = _key(rng, fmt).lower()
    return f'ts=2026-11-02T10:00:00Z level=debug msg="calling upstream" {key}={value} dur=12ms'


def _csv(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value) or "," in value:
        return None
    if fmt.name:
        return f"name,value,owner\n{fmt.name},{value},platform"
    return f"env,owner,value\nprod,platform,{value}\nstaging,platform,unset"


def _diff(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    key = _key(rng, fmt).upper()
    return f"@@ -4,3 +4,3 @@\n LOG_LEVEL=info\n-{key}=\n+{key}={value}\n TIMEOUT=30"


def _double_escaped(rng: random.Random, fmt: Format, value: str) -> str | None:
    """A JSON document held in a JSON string held in a tool call's JSON arguments."""
    inner = json.dumps({"config": json.dumps({_key(rng, fmt): value, "region": "eu"})})
    return '{"path":"fixtures/event.json","content":' + json.dumps(inner) + "}"


def _response_body(rng: random.Random, fmt: Format, value: str) -> str | None:
    key = fmt.name or rng.choice(["value", "data", "result"])
    return "HTTP/1.1 200 OK\nContent-Type: application/json\n\n" + json.dumps(
        {"id": rng.randint(1000, 9999), key: value, "expires_in": 3600}, indent=2
    )


def _form_body(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value) or any(c in value for c in "&=+/$"):
        return None
    key = (fmt.name or "client_secret").lower()
    return (
        "POST /oauth/token HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\n"
        f"grant_type=client_credentials&client_id=svc-ci&{key}={value}"
    )


def _powershell(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    key = _key(rng, fmt).upper()
    return rng.choice(
        [f'$env:{key} = "{value}"', f'[Environment]::SetEnvironmentVariable("{key}", "{value}", "User")']
    )


def _workflow(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    key = _key(rng, fmt).upper()
    return f"jobs:\n  deploy:\n    steps:\n      - run: ./deploy.sh\n        env:\n          {key}: {value}"


def _hcl(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    key = _key(rng, fmt).lower()
    return f'resource "vendor_integration" "ci" {{\n  name = "ci"\n  {key} = "{value}"\n}}'


def _html(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value) or '"' in value:
        return None
    return f'<form method="post"><input type="hidden" name="{_key(rng, fmt)}" value="{value}"></form>'


def _cjk_prose(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    if fmt.name:
        return f"配置里的 {fmt.name}={value}\uff0c请不要提交。"
    return rng.choice([f"新的凭据是{value}\uff0c请保存。", f"トークン\uff1a{value}\uff08本番用\uff09"])


def _prose(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not _one_line(fmt, value):
        return None
    if fmt.name:
        return f"I set {fmt.name} to {value}. Does that look right?"
    return rng.choice([f"The value ({value}) worked.", f'It printed "{value}".', f"Try this one: {value}."])


def _heredoc(rng: random.Random, fmt: Format, value: str) -> str | None:
    if not fmt.block:
        return None
    return f"cat > ~/.ssh/deploy_key <<'EOF'\n{value}\nEOF\nchmod 600 ~/.ssh/deploy_key"


def _json_file(rng: random.Random, fmt: Format, value: str) -> str | None:
    """A credentials file with the value JSON-quoted (a key block's newlines as `\\n`)."""
    key = "private_key" if fmt.block else _key(rng, fmt)
    return json.dumps({"type": "service_account", "project_id": "demo-123", key: value}, indent=2)


CARRIERS: dict[str, Carrier] = {
    "python": _python,
    "javascript": _javascript,
    "go": _go,
    "dockerfile": _dockerfile,
    "compose-list": _compose,
    "ini": _ini,
    "netrc": _netrc,
    "pgpass": _pgpass,
    "sql": _sql,
    "markdown": _markdown,
    "logfmt": _logfmt,
    "csv": _csv,
    "diff": _diff,
    "double-escaped-json": _double_escaped,
    "response-body": _response_body,
    "form-body": _form_body,
    "powershell": _powershell,
    "ci-workflow": _workflow,
    "hcl": _hcl,
    "html": _html,
    "cjk-prose": _cjk_prose,
    "prose": _prose,
    "heredoc": _heredoc,
    "json-file": _json_file,
}


def _as_planted(value: str, context: str) -> str | None:
    """The value as it reads in the context: itself, or escaped once or twice as JSON."""
    once = json.dumps(value)[1:-1]
    twice = json.dumps(once)[1:-1]
    for planted in (value, once, twice):
        if context.count(planted) == 1:
            return planted
    return None


def _secrets(rng: random.Random) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    used: Counter[str] = Counter()
    for fmt in (*_BARE, *_NAMED):
        for _ in range(_SECRETS_PER_FORMAT):
            value = fmt.make(rng)
            options = [name for name in CARRIERS if CARRIERS[name](random.Random(0), fmt, value) is not None]
            chosen = sorted(options, key=lambda name: (used[name], rng.random()))[:_CARRIERS_PER_SECRET]
            for carrier in chosen:
                context = CARRIERS[carrier](rng, fmt, value)
                planted = None if context is None else _as_planted(value, context)
                if context is None or planted is None:
                    continue
                used[carrier] += 1
                items.append(
                    {
                        "id": f"heldout-{len(items) + 1:04d}",
                        "kind": fmt.id,
                        "rule": fmt.source,
                        "rules": [fmt.source],
                        "class": "",
                        "classes": [],
                        "public_prefix": fmt.prefix if planted.startswith(fmt.prefix) else "",
                        "carrier": carrier,
                        "secret": planted,
                        "context": context,
                    }
                )
    return items


# ---- near-misses and placeholders --------------------------------------------------------------

NearMiss = Callable[[random.Random], tuple[str, str]]


def _sha(rng: random.Random, count: int) -> str:
    return _chars(rng, _HEX, count)


def _nm(template: str, make: Make) -> NearMiss:
    def near_miss(rng: random.Random) -> tuple[str, str]:
        value = make(rng)
        return value, template.format(v=value)

    return near_miss


def _fixed(*lines: tuple[str, str]) -> NearMiss:
    return lambda rng: rng.choice(lines)


_NEAR_MISSES: dict[str, NearMiss] = {
    "git-commit": _nm("commit {v}\nAuthor: Dev <dev@example.com>", lambda rng: _sha(rng, 40)),
    "git-log-oneline": _nm("{v} Fix the retry loop in the sync worker", lambda rng: _sha(rng, 7)),
    "sha256sum": _nm("{v}  pimem-0.2.0.tar.gz", lambda rng: _sha(rng, 64)),
    "docker-digest": _nm("image: ghcr.io/acme/api@sha256:{v}", lambda rng: _sha(rng, 64)),
    "npm-integrity": _nm('"integrity": "sha512-{v}=="', lambda rng: _chars(rng, _BASE64, 86)),
    "go-sum": _nm("golang.org/x/text v0.14.0 h1:{v}=", lambda rng: _chars(rng, _BASE64, 43)),
    "request-uuid": _nm("level=info request_id={v} status=200", _uuid),
    "aws-arn": _nm("role_arn = arn:aws:iam::{v}:role/deploy", lambda rng: _chars(rng, _DIGITS, 12)),
    "nix-store-path": _nm(
        "/nix/store/{v}-python3-3.12.1/bin/python3",
        lambda rng: _chars(rng, "0123456789abcdfghijklmnpqrsvwxyz", 32),
    ),
    "css-color": _nm("  color: #{v};", lambda rng: _sha(rng, 6)),
    "k8s-pod": _nm(
        "pod/{v} 1/1 Running 0 3h", lambda rng: f"api-{_sha(rng, 9)}-{_chars(rng, _LOWER + _DIGITS, 5)}"
    ),
    "container-id": _nm("CONTAINER ID {v}   api:latest   Up 2 hours", lambda rng: _sha(rng, 12)),
    "data-uri": _nm(
        '<img src="data:image/png;base64,{v}">', lambda rng: "iVBORw0KGgo" + _chars(rng, _BASE64, 80)
    ),
    "etag": _nm('ETag: "{v}"', lambda rng: _sha(rng, 32)),
    "prefixed-identifier": _fixed(
        ("sk_live_mode", "if settings.sk_live_mode:\n    warn()"),
        ("ghp_token_env", "ghp_token_env = 'GITHUB_TOKEN'"),
        ("npm_config_registry", "npm_config_registry=https://registry.npmjs.org/"),
        ("hf_hub_download", "from huggingface_hub import hf_hub_download"),
        ("xoxb_scopes", "xoxb_scopes = ['chat:write', 'channels:read']"),
        ("glpat_prefix", "GLPAT_PREFIX = glpat_prefix()"),
        ("AKIA_PREFIX", 'AKIA_PREFIX = "AKIA"  # long-term keys'),
        ("pk_test_mode", "const pk_test_mode = process.env.NODE_ENV !== 'production';"),
        ("key-value", "a key-value store keeps the session map"),
        ("dapi_client", "from databricks import dapi_client"),
    ),
    "env-reference": _fixed(
        ("${{ secrets.DB_PASSWORD }}", "        env:\n          DB_PASSWORD: ${{ secrets.DB_PASSWORD }}"),
        ('os.getenv("API_TOKEN")', 'token = os.getenv("API_TOKEN")'),
        ("process.env.STRIPE_KEY", "const stripe = new Stripe(process.env.STRIPE_KEY);"),
        ("$env:GITHUB_TOKEN", "gh auth login --with-token $env:GITHUB_TOKEN"),
        ("{{ .Values.db.password }}", "  password: {{ .Values.db.password }}"),
        ("%(DB_PASS)s", "password = %(DB_PASS)s"),
        ("${CI_JOB_TOKEN}", 'curl --header "JOB-TOKEN: ${CI_JOB_TOKEN}" https://gitlab.example.com/api'),
        ("vault.read('kv/app')", "secret = vault.read('kv/app')"),
    ),
    "settings-that-are-not-secrets": _fixed(
        ("3600", "TOKEN_TTL_SECONDS=3600"),
        ("15m", "access_token_expiry: 15m"),
        ("12", "password_min_length = 12"),
        ("X-Api-Key", 'API_KEY_HEADER = "X-Api-Key"'),
        ("client_secret_basic", 'token_endpoint_auth_method: "client_secret_basic"'),
        ("https://auth.example.com/oauth/token", 'token_url = "https://auth.example.com/oauth/token"'),
        ("db-credentials", "        secretName: db-credentials"),
        ("app-tls-cert", "  tls:\n    secretName: app-tls-cert"),
        ("RS256", 'jwt_algorithm = "RS256"'),
        ("pbkdf2_sha256", "PASSWORD_HASHER = 'pbkdf2_sha256'"),
    ),
    "public-key": _nm(
        "deploy.pub: ssh-ed25519 {v} ci@example",
        lambda rng: "AAAAC3NzaC1lZDI1NTE5AAAAI" + _chars(rng, _BASE64, 43),
    ),
    "prose-with-credential-words": _fixed(
        ("bearer", "Pass the bearer credentials along to the next service."),
        ("password", "The password reset flow sends an email with a link."),
        ("token", "Each token bucket refills at 10 requests per second."),
        ("secret", "The secret sauce is the cache warm-up on deploy."),
        ("api-key", "Rotate the api-key rotation schedule doc before Friday."),
        ("auth", "auth: the middleware rejects anonymous requests"),
    ),
    "urls-without-credentials": _fixed(
        ("https://github.com/acme/api.git", "git remote add origin https://github.com/acme/api.git"),
        ("git@github.com:acme/api.git", "git clone git@github.com:acme/api.git"),
        ("postgres://localhost:5432/app", "DATABASE_URL=postgres://localhost:5432/app"),
        ("postgres://app@db.internal/app", "DATABASE_URL=postgres://app@db.internal/app"),
        ("https://example.com/search?q=token+refresh", "see https://example.com/search?q=token+refresh"),
        ("ssh://git@git.example.org:2222/acme/api", "pushurl = ssh://git@git.example.org:2222/acme/api"),
    ),
    "long-identifiers": _fixed(
        ("AbstractSingletonProxyFactoryBean", "class AbstractSingletonProxyFactoryBean extends Base {}"),
        ("requestAnimationFrameCallbackId", "let requestAnimationFrameCallbackId = 0;"),
        ("test_refresh_token_is_rotated_on_use", "def test_refresh_token_is_rotated_on_use():"),
        ("PasswordResetTokenGenerator", "from django.contrib.auth.tokens import PasswordResetTokenGenerator"),
        ("getAccessTokenSilently", "const token = await getAccessTokenSilently();"),
    ),
}

_PLACEHOLDERS: dict[str, NearMiss] = {
    "placeholder": _fixed(
        (
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        ),
        ("<your-api-key>", 'headers = {"X-Api-Key": "<your-api-key>"}'),
        ("sk_test_YOUR_KEY_HERE", "stripe.api_key = 'sk_test_YOUR_KEY_HERE'"),
        ("changeme", "POSTGRES_PASSWORD=changeme"),
        ("REPLACE_ME", "client_secret: REPLACE_ME"),
        ("AKIAXXXXXXXXXXXXXXXX", "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX"),
        ("xoxb-your-token", "SLACK_BOT_TOKEN=xoxb-your-token"),
        ("********", "password: ********"),
    ),
}


def generate_heldout(seed: int = HELDOUT_SEED) -> dict[str, Any]:
    """The held-out corpus as JSON-ready data; the same seed always gives the same bytes."""
    rng = random.Random(seed)
    return {
        "version": _VERSION,
        "seed": seed,
        "about": (
            "Held-out synthetic secrets (none real), written apart from the tuned corpus from the "
            "public descriptions of each format, in carriers the tuned corpus does not use; benign "
            "near-misses that must come back unchanged; placeholders, which may be masked. Any "
            "[REDACTED:<rule>] marker is right here. Regenerate with: "
            "python -m pimem_conformance.secrets_corpus --write"
        ),
        "secrets": _secrets(rng),
        "lookalikes": draw_lookalikes(rng, _NEAR_MISSES, 12, "heldout-benign", tries_per_item=20),
        "placeholders": draw_lookalikes(rng, _PLACEHOLDERS, 8, "heldout-placeholder", tries_per_item=20),
    }
