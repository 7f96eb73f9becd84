"""Benign look-alikes: what a redactor must leave alone, and placeholders, which it may mask.

Near-misses are ids, hashes, encoded data, settings and references that merely resemble secrets
(a UUID, `TOKEN_LIMIT=100`, `password: ${DB_PASSWORD}`, an identifier that starts like a token).
Placeholders (`AKIA...EXAMPLE`, `<your-token>`, `xxxx`) are their own class: they stand for a
secret, so masking them is allowed, and they are reported apart.
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from collections.abc import Callable

from ._formats import ALPHABETS, pick

__all__ = ["NEAR_MISS_KINDS", "PLACEHOLDER_KINDS"]

Maker = Callable[[random.Random], tuple[str, str]]  # rng -> (value, the line it sits in)
HEX = ALPHABETS["h"]
B64 = ALPHABETS["b"]


def _pick(rng: random.Random, alphabet: str, length: int) -> str:
    return pick(rng, alphabet, length)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _in(rng: random.Random, templates: list[str], value: str) -> tuple[str, str]:
    return value, rng.choice(templates).format(s=value)


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


_FIRST_KINDS: dict[str, Maker] = {
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


def _prefixed_identifier(rng: random.Random) -> tuple[str, str]:
    # Identifiers that start like a token but are words in a program.
    value = rng.choice(
        [
            "hf_requiredCharacteristicTypes",
            "sk_test_helper_for_payments",
            "sk_live_mode_enabled",
            "ghp_config_loader",
            "glpat_settings_panel",
            "npm_config_registry",
            "pypi-publish-action",
            "xoxb_event_handler",
            "api_org_members_count",
            "key-value-store",
            "sk-learn-compatible-estimator",
            "pat_matcher_cache",
            "glc_parser_state",
            "shpat_length_check",
            "dapi_version_header",
        ]
    ) + rng.choice(["", "_v2", "2", "_test"])
    return _in(rng, ["def {s}(self):", "import {s}", "const {s} = require('./x');", "{s}()"], value)


def _credential_template(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            'curl -u "$USER:$PASS" https://api.example.com/v1',
            'curl -u "${API_USER}:${API_TOKEN}" https://x.example.com',
            'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
            "password: ${DB_PASSWORD}",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            'api_key = os.getenv("API_KEY")',
            "export AWS_SECRET_ACCESS_KEY=$AWS_SECRET",
            "mysql -u root -p$MYSQL_ROOT_PASSWORD",
            "DATABASE_URL=postgres://$DB_USER:$DB_PASS@db:5432/app",
        ]
    )
    return _in(rng, ["{s}", "# in CI: {s}", "run: {s}"], value)


def _code_assignment(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            "token = generate_token(user)",
            "password = hash_password(raw)",
            "secret = load_secret_from_vault()",
            "self.api_key = settings.api_key",
            "const token = await getAccessToken();",
            "auth = HTTPBasicAuth(user, pwd)",
            "credentials = service_account.Credentials",
            "password_hash = bcrypt.hashpw(pw, salt)",
        ]
    )
    return _in(rng, ["{s}", "    {s}", "# {s}"], value)


def _command_flags(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            f"docker run -p {rng.randint(1024, 9999)}:80 app",
            "mkdir -p src/components/forms",
            f"ssh -p {rng.randint(2000, 2999)} deploy@host",
            "pytest -p no:cacheprovider tests/",
            "git log -p --follow src/index.ts",
            "gh auth login --with-token < token.txt",
            "vault read --token-file ./token.txt secret/app",
            "npm publish --access public",
        ]
    )
    return _in(rng, ["$ {s}", "{s}", "ran `{s}`"], value)


def _benign_query(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            "https://api.example.com/v1/items?page=2&sort=asc&token_type=bearer",
            "https://example.com/search?q=api+key+rotation&lang=en",
            "https://docs.example.com/auth?section=tokens#refresh",
            "https://example.com/login?next=/settings/password&reason=expired",
            "https://cdn.example.com/app.js?v=3f7a9c2",
        ]
    )
    return _in(rng, ["see {s}", "GET {s}", "{s}"], value)


def _config_map(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(["log_level: debug", "api_url: https://api.example.com", "token_ttl: 3600s"])
    return _in(
        rng,
        ["kind: ConfigMap\ndata:\n  {s}\n", "kind: ConfigMap\nmetadata:\n  name: app\ndata:\n  {s}"],
        value,
    )


def _benign_cookie_and_headers(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            "Cookie: theme=dark; lang=en-US",
            "Set-Cookie: consent=accepted; Path=/; Max-Age=31536000",
            "Accept: application/json",
            "X-Request-Id: req-2024-06-01",
            "Authorization: required for this endpoint",
        ]
    )
    return _in(rng, ["{s}", "> {s}", "header {s}"], value)


def _key_names_with_words(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            "sort_key: created_at",
            "primary_key: id",
            "partition_key: tenant_id",
            "access: read-only",
            "api: v2",
            "auth_method: oauth2",
            "keyboard_layout: dvorak",
            "api_version: 2024-06-01",
        ]
    )
    return _in(rng, ["{s}", "  {s}", "# {s}"], value)


def _public_certificate(rng: random.Random) -> tuple[str, str]:
    body = base64.b64encode(rng.randbytes(120)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    value = f"-----BEGIN CERTIFICATE-----\n{lines}\n-----END CERTIFICATE-----"
    return _in(rng, ["{s}", "ca.crt:\n{s}"], value)


# Identifier-shaped look-alikes (since 0.2.0, JM-REDACT-071): names that only start like a token,
# content hashes in URL paths, and values that only say where a secret is kept.
_TOKEN_PREFIXES = (
    *("ghp_", "github_pat_", "glpat-", "gldt-", "glrt-", "xoxb-", "xoxp-", "xoxa-", "xoxb_", "sk_live_"),
    *("rk_test_", "sk-", "hf_", "dckr_pat_", "pscale_tkn_", "sb_secret_", "sq0atp-", "npm_", "ya29."),
)
_NAME_WORDS = (
    *("config", "loader", "event", "handler", "registry", "settings", "panel", "component", "mode"),
    *("enabled", "helpers", "session", "manager", "client", "factory", "webhook", "signature"),
    *("verifier", "parser", "state", "mirror", "rotation", "scheduler", "service", "v2", "utils"),
)


def _token_prefixed_name(rng: random.Random) -> tuple[str, str]:
    prefix = rng.choice(_TOKEN_PREFIXES)
    joiner = rng.choice("_-.") if prefix[-1] != "." else rng.choice("_-")
    value = prefix + joiner.join(rng.sample(_NAME_WORDS, rng.randint(3, 6)))
    templates = [
        "cat src/{s}.ts",
        "python {s}.py --dry-run",
        "open components/{s}.vue",
        "docker compose run {s}",
        "from {s} import load",
        "def {s}(self):",
        "see docs/{s}.md",
    ]
    if joiner == "." or "-" in value:  # not a Python name
        templates = [t for t in templates if not t.startswith(("from", "def"))]
    return _in(rng, templates, value)


def _hex_in_url_path(rng: random.Random) -> tuple[str, str]:
    digest = _pick(rng, HEX, rng.choice([32, 40, 64]))
    value = rng.choice(
        [
            f"https://ci.example.com/builds/{digest}/log",
            f"https://registry.example.com/v2/app/blobs/sha256:{digest}",
            f"https://cdn.example.com/cache/{digest}.tar.gz",
            f"https://github.com/acme/app/commit/{digest}",
            f"https://example.com/token/{digest}/download",
            f"https://artifacts.example.org/secrets-scan/{digest}/report.json",
        ]
    )
    return _in(rng, ["GET {s} 200", "see {s}", "curl -sSfL {s} -o out", '"url": "{s}"'], value)


def _secret_store_reference(rng: random.Random) -> tuple[str, str]:
    item = rng.choice(["github", "postgres", "openai", "deploy", "stripe"])
    value = rng.choice(
        [
            f"API_KEY=`vault read -field=key secret/{item}`",
            f"export DB_PASSWORD=$(aws secretsmanager get-secret-value --secret-id prod/{item}"
            " --query SecretString --output text)",
            f'export GITHUB_TOKEN="$(op read op://Engineering/{item}/credential)"',
            f"token: op://Private/{item}/password",
            f"OPENAI_API_KEY=op://dev/{item}/api-key",
            f'SECRET_KEY="$(gcloud secrets versions access latest --secret={item}-secret-key)"',
            f"client_secret: vault:secret/data/{item}#client_secret",
            f"token: projects/123456789/secrets/{item}-token/versions/latest",
            f'password: "/run/secrets/{item}_password"',
            f'imap-passwd-cmd = "pass show mail/{item}"',
            f"export NPM_TOKEN=$(doppler secrets get {item.upper()}_TOKEN --plain)",
            f"API_TOKEN=$(security find-generic-password -a ci -s {item}-token -w)",
        ]
    )
    return _in(rng, ["{s}", "run: {s}", "# in CI: {s}"], value)


NEAR_MISS_KINDS: dict[str, Maker] = {
    **_FIRST_KINDS,
    "prefixed-identifier": _prefixed_identifier,
    "credential-template": _credential_template,
    "code-assignment": _code_assignment,
    "command-flags": _command_flags,
    "benign-query": _benign_query,
    "config-map": _config_map,
    "benign-headers": _benign_cookie_and_headers,
    "key-names-with-words": _key_names_with_words,
    "public-certificate": _public_certificate,
    "token-prefixed-name": _token_prefixed_name,
    "hex-in-url-path": _hex_in_url_path,
    "secret-store-reference": _secret_store_reference,
}


def _placeholder(rng: random.Random) -> tuple[str, str]:
    value = rng.choice(
        [
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "ghp_" + "x" * 36,
            "sk_test_" + "X" * 24,
            "<your-token>",
            "YOUR_API_KEY",
            "xxxxxxxxxxxxxxxxxxxxxxxx",
            "********",
            "changeme",
            "REPLACE_ME_WITH_A_REAL_KEY",
            "sk-" + "." * 3 + "your-key-here",
            "glpat-" + "X" * 20,
        ]
    )
    return _in(
        rng,
        [
            "api_key: {s}",
            "export GITHUB_TOKEN={s}",
            "password = '{s}'",
            "use {s} for the example",
            "token={s}",
        ],
        value,
    )


PLACEHOLDER_KINDS: dict[str, Maker] = {"placeholder": _placeholder}
