"""Deterministic generator of the labeled secrets corpus (`corpus.json` beside this module).

Every secret is synthetic: random characters from a seeded generator, shaped like the format that
a published gitleaks rule detects, so the kinds come from outside this project's own patterns.
Kinds that gitleaks has no rule for (credential URIs) name the redaction class of the spec instead
and say so in `rule`. Each item carries the line it sits in (`context`), because whether a value
is a secret often depends on its neighbours (an AWS secret key is only one next to its key name
or an access key id). The look-alikes are what must survive: identifiers, hashes and settings
that merely resemble secrets.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["CORPUS_SEED", "generate"]

CORPUS_SEED = 20261129
PER_SECRET_KIND = 13
PER_LOOKALIKE_KIND = 16

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
BASE32_UPPER = string.ascii_uppercase + "234567"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
PASSWORD_CHARS = ALNUM + "!#%^*-_.~"

Maker = Callable[[random.Random], tuple[str, str]]  # rng -> (secret or value, context line)


def _pick(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _password(rng: random.Random) -> str:
    # Always mixed letters, digits and a symbol, so no value is a plain word or a number.
    core = _pick(rng, PASSWORD_CHARS, rng.randint(10, 20))
    return rng.choice(string.ascii_uppercase) + core + rng.choice(string.digits) + rng.choice("!#%^*")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _in(rng: random.Random, templates: list[str], secret: str, **fields: str) -> tuple[str, str]:
    return secret, rng.choice(templates).format(s=secret, **fields)


# ---- secrets, one maker per kind ------------------------------------------------------------


def _aws_access_token(rng: random.Random) -> tuple[str, str]:
    secret = rng.choice(["AKIA", "ASIA"]) + _pick(rng, BASE32_UPPER, 16)
    return _in(
        rng,
        [
            "the deploy user is {s}, rotate it next week",
            "aws sts get-caller-identity  # using access key {s}",
            '{{"AccessKeyId": "{s}", "Expiration": "2026-12-01T00:00:00Z"}}',
            "Found credentials for {s} in the shell history",
        ],
        secret,
    )


def _aws_secret_access_key(rng: random.Random) -> tuple[str, str]:
    secret = _pick(rng, B64, 40)
    key_id = "AKIA" + _pick(rng, BASE32_UPPER, 16)
    return _in(
        rng,
        [
            "aws_secret_access_key = {s}",
            "export AWS_SECRET_ACCESS_KEY={s}",
            "[default]\naws_access_key_id = {k}\naws_secret_access_key = {s}\nregion = eu-central-1",
            '{{"AccessKeyId": "{k}", "SecretAccessKey": "{s}", "SessionToken": null}}',
            "aws configure set secret_access_key {s}",
            "key id {k} with secret {s}",
        ],
        secret,
        k=key_id,
    )


def _github_prefixed(prefixes: list[str]) -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        secret = rng.choice(prefixes) + _pick(rng, ALNUM, 36)
        return _in(
            rng,
            [
                "export GITHUB_TOKEN={s}",
                "git remote set-url origin https://{s}@github.com/acme/webapp.git",
                "gh auth login --with-token <<< {s}",
                "the workflow failed because {s} had expired",
                '{{"token": "{s}", "scopes": ["repo"]}}',
            ],
            secret,
        )

    return make


def _github_fine_grained_pat(rng: random.Random) -> tuple[str, str]:
    secret = "github_pat_" + _pick(rng, ALNUM, 22) + "_" + _pick(rng, ALNUM, 59)
    return _in(
        rng,
        [
            "GH_TOKEN={s} gh pr list",
            "paste this into the secret: {s}",
            "Authorization: token {s}",
        ],
        secret,
    )


def _gitlab_pat(rng: random.Random) -> tuple[str, str]:
    secret = "glpat-" + _pick(rng, URLSAFE, 20)
    return _in(
        rng,
        [
            "git clone https://oauth2:{s}@gitlab.com/acme/infra.git",
            'curl --header "PRIVATE-TOKEN: {s}" https://gitlab.com/api/v4/projects',
            "CI_JOB_TOKEN fallback: {s}",
        ],
        secret,
    )


def _slack_bot_token(rng: random.Random) -> tuple[str, str]:
    secret = (
        f"xoxb-{_pick(rng, string.digits, rng.randint(10, 13))}-"
        f"{_pick(rng, string.digits, rng.randint(10, 13))}-{_pick(rng, ALNUM, 24)}"
    )
    return _in(
        rng,
        [
            "SLACK_BOT_TOKEN={s}",
            'client = WebClient(token="{s}")',
            "the bot posts with {s} into #deploys",
        ],
        secret,
    )


def _slack_user_token(rng: random.Random) -> tuple[str, str]:
    numbers = "-".join(_pick(rng, string.digits, rng.randint(10, 13)) for _ in range(3))
    secret = f"xoxp-{numbers}-{_pick(rng, HEX, 32)}"
    return _in(
        rng,
        [
            "slack user token: {s}",
            "curl -d token={s} https://slack.com/api/users.list",
            "my personal token {s} (do not share)",
        ],
        secret,
    )


def _openai_api_key(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.5:
        secret = "sk-proj-" + _pick(rng, URLSAFE, 74) + "T3BlbkFJ" + _pick(rng, URLSAFE, 74)
    else:
        secret = "sk-" + _pick(rng, ALNUM, 20) + "T3BlbkFJ" + _pick(rng, ALNUM, 20)
    return _in(
        rng,
        [
            "OPENAI_API_KEY={s}",
            'client = OpenAI(api_key="{s}")',
            "I rotated the key, the new one is {s}",
        ],
        secret,
    )


def _anthropic_api_key(rng: random.Random) -> tuple[str, str]:
    secret = "sk-ant-api03-" + _pick(rng, URLSAFE, 93) + "AA"
    return _in(
        rng,
        [
            "export ANTHROPIC_API_KEY={s}",
            "x-api-key: {s}",
            "use {s} for the eval run",
        ],
        secret,
    )


def _stripe_access_token(rng: random.Random) -> tuple[str, str]:
    secret = rng.choice(["sk_live_", "rk_live_"]) + _pick(rng, ALNUM, rng.randint(24, 99))
    return _in(
        rng,
        [
            "STRIPE_SECRET_KEY={s}",
            'stripe.api_key = "{s}"',
            "charged the card using {s}",
        ],
        secret,
    )


def _npm_access_token(rng: random.Random) -> tuple[str, str]:
    secret = "npm_" + _pick(rng, ALNUM, 36)
    return _in(
        rng,
        [
            "//registry.npmjs.org/:_authToken={s}",
            "NPM_TOKEN={s} npm publish",
            "publishing with {s}",
        ],
        secret,
    )


def _pypi_upload_token(rng: random.Random) -> tuple[str, str]:
    secret = "pypi-AgEIcHlwaS5vcmc" + _pick(rng, URLSAFE, rng.randint(60, 160))
    return _in(
        rng,
        [
            "twine upload -u __token__ -p {s} dist/*",
            "[pypi]\nusername = __token__\npassword = {s}",
            "TWINE_PASSWORD={s}",
        ],
        secret,
    )


def _gcp_api_key(rng: random.Random) -> tuple[str, str]:
    secret = "AIza" + _pick(rng, URLSAFE, 35)
    return _in(
        rng,
        [
            "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={s}",
            'firebaseConfig = {{ apiKey: "{s}", projectId: "acme-prod" }}',
            "the key {s} is restricted to our referrer",
        ],
        secret,
    )


def _jwt(rng: random.Random) -> tuple[str, str]:
    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    payload = {
        "sub": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "name": rng.choice(["Ada", "Grace", "Linus", "Barbara"]),
        "iat": rng.randint(1_600_000_000, 1_800_000_000),
    }
    secret = ".".join(
        [
            _b64url(json.dumps(header, separators=(",", ":")).encode()),
            _b64url(json.dumps(payload, separators=(",", ":")).encode()),
            _b64url(rng.randbytes(32)),
        ]
    )
    return _in(
        rng,
        [
            "Authorization: Bearer {s}",
            "the session cookie was {s}",
            "decoded {s} with jwt.io",
        ],
        secret,
    )


def _private_key(rng: random.Random) -> tuple[str, str]:
    label = rng.choice(["RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    body = base64.b64encode(rng.randbytes(rng.randint(3, 6) * 48)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    secret = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
    return _in(
        rng,
        [
            "cat deploy_key\n{s}",
            "here is the key from the vault:\n{s}\n",
            "{s}",
        ],
        secret,
    )


def _sendgrid_api_token(rng: random.Random) -> tuple[str, str]:
    secret = "SG." + _pick(rng, URLSAFE, 22) + "." + _pick(rng, URLSAFE, 43)
    return _in(
        rng,
        [
            "SENDGRID_API_KEY={s}",
            'sg = SendGridAPIClient("{s}")',
            "mail goes out through {s}",
        ],
        secret,
    )


def _shopify_access_token(rng: random.Random) -> tuple[str, str]:
    secret = "shpat_" + _pick(rng, HEX, 32)
    return _in(
        rng,
        [
            "X-Shopify-Access-Token: {s}",
            "SHOPIFY_ADMIN_TOKEN={s}",
            "the store app token {s} has write_products",
        ],
        secret,
    )


def _huggingface_access_token(rng: random.Random) -> tuple[str, str]:
    secret = "hf_" + _pick(rng, string.ascii_letters, 34)
    return _in(
        rng,
        [
            "huggingface-cli login --token {s}",
            "HF_TOKEN={s}",
            'login(token="{s}")',
        ],
        secret,
    )


def _twilio_api_key(rng: random.Random) -> tuple[str, str]:
    secret = "SK" + _pick(rng, HEX, 32)
    return _in(
        rng,
        [
            "TWILIO_API_KEY={s}",
            'client = Client("{s}", api_secret, account_sid)',
            "the twilio key {s} belongs to the staging project",
        ],
        secret,
    )


def _generic_api_key(rng: random.Random) -> tuple[str, str]:
    secret = _password(rng)
    key = rng.choice(
        [
            "api_key",
            "apikey",
            "API_KEY",
            "client_secret",
            "access_key",
            "auth_token",
            "secret",
            "SERVICE_TOKEN",
            "credentials",
            "private_key",
        ]
    )
    return _in(
        rng,
        [
            "{k}={s}",
            "{k}: {s}",
            '"{k}": "{s}",',
            "config.{k} = '{s}'",
        ],
        secret,
        k=key,
    )


def _database_password(rng: random.Random) -> tuple[str, str]:
    secret = _password(rng)
    key = rng.choice(["DB_PASSWORD", "db_password", "DATABASE_PASSWORD", "db_passwd", "pwd"])
    return _in(
        rng,
        [
            "{k}={s}",
            '{k}: "{s}"',
            "export {k}='{s}'",
        ],
        secret,
        k=key,
    )


def _curl_auth_user(rng: random.Random) -> tuple[str, str]:
    secret = _password(rng).replace("!", "9").replace("#", "8")  # shell-quotable inside '...'
    user = rng.choice(["admin", "deploy", "elastic", "jenkins", "ops"])
    return _in(
        rng,
        [
            "curl -u {u}:{s} https://search.internal:9200/_cat/indices",
            "curl --user '{u}:{s}' -X POST https://ci.internal/job/build",
            "curl -s -u {u}:{s} https://registry.internal/v2/_catalog",
        ],
        secret,
        u=user,
    )


def _curl_auth_header(rng: random.Random) -> tuple[str, str]:
    secret = _pick(rng, URLSAFE, rng.randint(32, 48))
    return _in(
        rng,
        [
            'curl -H "Authorization: Bearer {s}" https://api.internal/v1/me',
            "curl --header 'Authorization: Token {s}' https://api.internal/v1/items",
            'curl -X GET https://api.internal/health -H "Authorization: Bearer {s}"',
        ],
        secret,
    )


def _connection_string(rng: random.Random) -> tuple[str, str]:
    secret = _password(rng).replace("#", "8").replace("%", "5")  # URI-safe without escaping
    host = rng.choice(["db.internal", "10.0.3.17", "cluster0.a1b2c.mongodb.net", "cache.internal"])
    return _in(
        rng,
        [
            "DATABASE_URL=postgres://app:{s}@{h}:5432/app",
            "psql postgresql://report_ro:{s}@{h}/warehouse",
            "mongodb+srv://admin:{s}@{h}/prod?retryWrites=true",
            "MYSQL_URL=mysql://root:{s}@{h}:3306/shop",
            "redis://default:{s}@{h}:6379/0",
            "amqp://worker:{s}@{h}:5672/jobs",
            "Server=tcp:{h},1433;Database=sales;User Id=sa;Password={s};Encrypt=true;",
        ],
        secret,
        h=host,
    )


def _url_userinfo(rng: random.Random) -> tuple[str, str]:
    secret = _password(rng).replace("#", "8").replace("%", "5")
    return _in(
        rng,
        [
            "git clone https://deploy:{s}@git.internal/acme/app.git",
            "pip install --index-url https://ci:{s}@pypi.internal/simple acme-lib",
            "proxy is http://squid:{s}@proxy.internal:3128",
            "ftp://backup:{s}@files.internal/nightly/",
        ],
        secret,
    )


# kind -> (rule it follows, redaction class the spec expects, maker)
SECRET_KINDS: dict[str, tuple[str, str, Maker]] = {
    "aws-access-token": ("gitleaks:aws-access-token", "token", _aws_access_token),
    "aws-secret-access-key": ("gitleaks:aws-secret-access-key", "aws-secret", _aws_secret_access_key),
    "github-pat": ("gitleaks:github-pat", "token", _github_prefixed(["ghp_"])),
    "github-oauth": ("gitleaks:github-oauth", "token", _github_prefixed(["gho_"])),
    "github-app-token": ("gitleaks:github-app-token", "token", _github_prefixed(["ghu_", "ghs_"])),
    "github-refresh-token": ("gitleaks:github-refresh-token", "token", _github_prefixed(["ghr_"])),
    "github-fine-grained-pat": ("gitleaks:github-fine-grained-pat", "token", _github_fine_grained_pat),
    "gitlab-pat": ("gitleaks:gitlab-pat", "token", _gitlab_pat),
    "slack-bot-token": ("gitleaks:slack-bot-token", "token", _slack_bot_token),
    "slack-user-token": ("gitleaks:slack-user-token", "token", _slack_user_token),
    "openai-api-key": ("gitleaks:openai-api-key", "token", _openai_api_key),
    "anthropic-api-key": ("gitleaks:anthropic-api-key", "token", _anthropic_api_key),
    "stripe-access-token": ("gitleaks:stripe-access-token", "token", _stripe_access_token),
    "npm-access-token": ("gitleaks:npm-access-token", "token", _npm_access_token),
    "pypi-upload-token": ("gitleaks:pypi-upload-token", "token", _pypi_upload_token),
    "gcp-api-key": ("gitleaks:gcp-api-key", "token", _gcp_api_key),
    "jwt": ("gitleaks:jwt", "jwt", _jwt),
    "private-key": ("gitleaks:private-key", "private-key", _private_key),
    "sendgrid-api-token": ("gitleaks:sendgrid-api-token", "token", _sendgrid_api_token),
    "shopify-access-token": ("gitleaks:shopify-access-token", "token", _shopify_access_token),
    "huggingface-access-token": ("gitleaks:huggingface-access-token", "token", _huggingface_access_token),
    "twilio-api-key": ("gitleaks:twilio-api-key", "token", _twilio_api_key),
    "generic-api-key": ("gitleaks:generic-api-key", "assignment", _generic_api_key),
    "database-password": ("gitleaks:database-password", "assignment", _database_password),
    "curl-auth-user": ("gitleaks:curl-auth-user", "curl-user", _curl_auth_user),
    "curl-auth-header": ("gitleaks:curl-auth-header", "auth-header", _curl_auth_header),
    # No gitleaks rule covers credentials inside URIs; these follow the spec's own classes.
    "connection-string": ("pimem-spec:connection-string", "connection-string", _connection_string),
    "url-userinfo": ("pimem-spec:url-userinfo", "url-userinfo", _url_userinfo),
}


# ---- benign look-alikes -----------------------------------------------------------------------


def _uuid4(rng: random.Random) -> tuple[str, str]:
    value = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return _in(
        rng,
        [
            "request {s} timed out after 30s",
            '{{"traceId": "{s}", "status": 504}}',
            'session_id = "{s}"',
            "DELETE /api/orders/{s}",
        ],
        value,
    )


def _uuid7(rng: random.Random) -> tuple[str, str]:
    millis = rng.randint(1_700_000_000_000, 1_800_000_000_000)
    raw = (millis << 80) | (0x7 << 76) | (rng.getrandbits(12) << 64) | (0b10 << 62) | rng.getrandbits(62)
    value = str(uuid.UUID(int=raw))
    return _in(
        rng,
        [
            "resumed session {s}",
            "pi --session {s}.jsonl",
            "the journal id is {s}",
        ],
        value,
    )


def _git_sha(rng: random.Random) -> tuple[str, str]:
    value = _pick(rng, HEX, 40)
    return _in(
        rng,
        [
            "git checkout {s}",
            "commit {s}\nAuthor: Ada <ada@example.com>",
            "reverted {s} because it broke the build",
            "HEAD is now at {s}",
        ],
        value,
    )


def _git_short_sha(rng: random.Random) -> tuple[str, str]:
    value = _pick(rng, HEX, rng.randint(7, 12))
    return _in(
        rng,
        [
            "{s} fix flaky test in the indexer",
            "git show {s} --stat",
            "cherry-picked {s} onto release/2.4",
        ],
        value,
    )


def _sha256(rng: random.Random) -> tuple[str, str]:
    value = _pick(rng, HEX, 64)
    return _in(
        rng,
        [
            "sha256sum: {s}  dist/app.tar.gz",
            'checksum = "{s}"',
            "image digest sha256:{s}",
            "expected hash {s} but the download differs",
        ],
        value,
    )


def _md5(rng: random.Random) -> tuple[str, str]:
    value = _pick(rng, HEX, 32)
    return _in(
        rng,
        [
            "md5 ({s}) matches the mirror",
            'ETag: "{s}"',
            "cache key {s} evicted",
        ],
        value,
    )


def _npm_integrity(rng: random.Random) -> tuple[str, str]:
    value = "sha512-" + base64.b64encode(rng.randbytes(64)).decode()
    return _in(
        rng,
        [
            '"integrity": "{s}",',
            "integrity {s}",
        ],
        value,
    )


def _base64_in_code(rng: random.Random) -> tuple[str, str]:
    value = base64.b64encode(rng.randbytes(rng.choice([18, 27, 33, 45]))).decode()
    return _in(
        rng,
        [
            'icon = base64.b64decode("{s}")',
            "const fixture = Buffer.from('{s}', 'base64');",
            'assert encode(payload) == "{s}"',
            "data:image/png;base64,{s}",
        ],
        value,
    )


def _base64_40_without_context(rng: random.Random) -> tuple[str, str]:
    # Shaped like an AWS secret key, but with no key name and no access key id anywhere near.
    value = _pick(rng, B64, 40)
    return _in(
        rng,
        [
            "fixture blob: {s}",
            'nonce = "{s}"',
            "the test vector is {s}",
        ],
        value,
    )


def _setting_number(rng: random.Random) -> tuple[str, str]:
    key = rng.choice(
        [
            "TOKEN_LIMIT",
            "max_tokens",
            "PASSWORD_MIN_LENGTH",
            "SECRET_ROTATION_DAYS",
            "auth_retries",
            "API_KEY_TTL",
            "token_budget",
            "credential_cache_size",
        ]
    )
    value = f"{key}={rng.choice([1, 8, 12, 64, 100, 1024, 4096, 128000, 30000000])}"
    return _in(rng, ["{s}", "set {s} in the config", "export {s}"], value)


def _setting_word(rng: random.Random) -> tuple[str, str]:
    key = rng.choice(
        [
            "SECRET_MODE",
            "auth",
            "USE_TOKEN",
            "password_reset",
            "API_KEY_REQUIRED",
            "credential_helper_enabled",
            "token_refresh",
        ]
    )
    word = rng.choice(["enabled", "true", "false", "none", "null", "on", "off", "yes", "no"])
    value = f"{key}={word}" if rng.random() < 0.5 else f"{key}: {word}"
    return _in(rng, ["{s}", "# default: {s}", "they set {s} for staging"], value)


def _url_without_password(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            "https://github.com/acme/{w}.git",
            "postgres://localhost:5432/{w}",
            "redis://cache.internal:6379/0",
            "https://git@gitlab.com/acme/{w}",
            "ssh://git@github.com/acme/{w}.git",
            "https://docs.python.org/3/library/{w}.html",
            "mongodb://db.internal:27017/{w}",
        ]
    ).format(w=rng.choice(["webapp", "billing", "infra", "search", "secrets"]))
    return _in(rng, ["cloned {s}", "see {s}", "DATABASE_HOST_URL points at {s}"], value)


def _prose_with_keywords(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            "the password must be at least 12 characters long",
            "send the Bearer token in the Authorization header",
            "rotate the API key every 90 days",
            "store secrets in the vault, never in the repository",
            "the token expired, so log in again",
            "use an access key with read-only permissions",
            "private keys live in ~/.ssh and never leave the machine",
            "the auth middleware rejects requests without credentials",
        ]
    )
    return _in(rng, ["{s}", "Note: {s}.", "Reminder - {s}"], value)


def _sk_words(rng: random.Random) -> tuple[str, str]:
    # Hyphenated words that contain `sk-`, `pk-` or `hf_`-like fragments without being tokens.
    value = (
        rng.choice(
            [
                "task-management-service",
                "desk-booking-frontend",
                "kiosk-mode-settings",
                "risk-assessment-report",
                "disk-usage-monitor",
                "flask-login-extension",
                "whisk-webhook-handler",
                "ask-question-dialog",
            ]
        )
        + "-"
        + str(rng.randint(1, 99))
    )
    return _in(rng, ["deployed {s}", "cd services/{s}", "the {s} repo"], value)


def _env_reference(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            "password: ${DB_PASSWORD}",
            'api_key = os.environ["API_KEY"]',
            "token: $GITHUB_TOKEN",
            "secret: {{ .Values.secret }}",
            "password=<your-password-here>",
            'api_key: "${API_KEY}"',
        ]
    )
    return _in(rng, ["{s}", "in values.yaml: {s}", "example config: {s}"], value)


def _public_key(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.5:
        value = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + base64.b64encode(rng.randbytes(32)).decode()[:43]
        return _in(rng, ["{s} ada@laptop", "added {s} to authorized_keys"], value)
    body = base64.b64encode(rng.randbytes(96)).decode()
    value = "-----BEGIN PUBLIC KEY-----\n" + body[:64] + "\n" + body[64:] + "\n-----END PUBLIC KEY-----"
    return _in(rng, ["{s}", "the server's public key:\n{s}"], value)


def _ulid(rng: random.Random) -> tuple[str, str]:
    value = _pick(rng, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 26)
    return _in(rng, ["event {s} processed", "job_id={s}"], value)


def _semver_and_ip(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}",
            f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
            f":{rng.randint(1024, 65535)}",
            f"node-{rng.randint(1, 40)}.eu-central-1.compute.internal",
        ]
    )
    return _in(rng, ["upgraded to {s}", "connecting to {s}", "{s} is healthy"], value)


def _jwt_header_only(rng: random.Random) -> tuple[str, str]:
    # Only the encoded header of a JWT: public and the same for every token of that algorithm.
    header = {"alg": rng.choice(["HS256", "RS256", "ES384"]), "typ": "JWT", "kid": _pick(rng, HEX, 8)}
    value = _b64url(json.dumps(header, separators=(",", ":")).encode())
    return _in(rng, ["every token starts with {s}", "header {s} decodes to the algorithm"], value)


LOOKALIKE_KINDS: dict[str, Maker] = {
    "uuid-v4": _uuid4,
    "uuid-v7": _uuid7,
    "git-sha": _git_sha,
    "git-short-sha": _git_short_sha,
    "sha256-hex": _sha256,
    "md5-hex": _md5,
    "npm-integrity": _npm_integrity,
    "base64-in-code": _base64_in_code,
    "base64-40-no-context": _base64_40_without_context,
    "setting-number": _setting_number,
    "setting-word": _setting_word,
    "url-without-password": _url_without_password,
    "prose-with-keywords": _prose_with_keywords,
    "hyphenated-sk-words": _sk_words,
    "env-reference": _env_reference,
    "public-key": _public_key,
    "ulid": _ulid,
    "version-or-host": _semver_and_ip,
    "jwt-header-only": _jwt_header_only,
}


def _items(
    rng: random.Random,
    makers: dict[str, Maker],
    per_kind: int,
    prefix: str,
    extra: Callable[[str], dict[str, str]],
    value_key: str,
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for kind, make in makers.items():
        seen: set[str] = set()
        while len(seen) < per_kind:
            value, context = make(rng)
            if context in seen or context.count(value) != 1:
                continue  # each line once per kind, and the value unambiguous inside it
            seen.add(context)
            items.append(
                {
                    "id": f"{prefix}-{len(items) + 1:03d}",
                    "kind": kind,
                    **extra(kind),
                    value_key: value,
                    "context": context,
                }
            )
    return items


def generate(seed: int = CORPUS_SEED) -> dict[str, Any]:
    """The whole corpus as JSON-ready data; the same seed always gives the same bytes."""
    rng = random.Random(seed)
    secrets = _items(
        rng,
        {kind: spec[2] for kind, spec in SECRET_KINDS.items()},
        PER_SECRET_KIND,
        "secret",
        lambda kind: {"rule": SECRET_KINDS[kind][0], "class": SECRET_KINDS[kind][1]},
        "secret",
    )
    lookalikes = _items(rng, LOOKALIKE_KINDS, PER_LOOKALIKE_KIND, "benign", lambda kind: {}, "value")
    return {
        "version": 1,
        "seed": seed,
        "about": (
            "Synthetic secrets (none real) shaped like the formats the named gitleaks rules detect, "
            "and benign look-alikes. `secret`/`value` occurs exactly once in `context`. "
            "Regenerate with: python -m pimem_conformance.secrets_corpus --write"
        ),
        "secrets": secrets,
        "lookalikes": lookalikes,
    }
