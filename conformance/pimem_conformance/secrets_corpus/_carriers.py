"""Carriers: the texts a journal holds a secret in, from a pasted line to a JSON-escaped tool call.

A carrier takes a secret (and, for a named kind, the key name it goes under) and returns the line
it is planted in, or None when the secret cannot sit there (a URL cannot hold a base64 `/`).
Container families (a key block, a credential URL, a command line) have their own forms, which the
carriers embed like any value.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable

from ._formats import ALPHABETS, pick
from ._kinds import Kind

__all__ = ["CARRIERS", "ESCAPES", "plant"]

# What a JSON-escaped string holds right before a secret: each escape a tool call's arguments have.
ESCAPES = ("\\n", "\\t", "\\r", '\\"', "\\\\", "\\u001b")
# Key names for bare kinds: no credential word in them, so no generic rule can carry the secret.
_NEUTRAL = ("DEPLOY_VALUE", "release_value", "ciValue", "build.value", "job-value")
_HOSTS = ("api.example.com", "internal.example.org", "ci.example.net")


def _escaped(text: str) -> str:
    """`text` as it reads inside a JSON string."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _escaped_lines(rng: random.Random, lines: str) -> str:
    path = rng.choice(["notes.md", "deploy/config.txt", "scratch.txt"])
    return '{"path":"' + path + '","content":"' + _escaped("# draft\n" + lines + "\n") + '"}'


def _name(rng: random.Random, kind: Kind) -> str:
    return rng.choice(kind.names or _NEUTRAL)


Carrier = Callable[[random.Random, Kind, str], "str | None"]


def _plain(rng: random.Random, kind: Kind, secret: str) -> str | None:
    if kind.names:
        return None  # a named kind is only recognisable under its name
    return rng.choice(
        ["deploy with {s} today", "the CI log printed {s} twice", "{s}", "here it is:\n{s}\nthanks"]
    ).format(s=secret)


def _json_escaped(rng: random.Random, kind: Kind, secret: str) -> str | None:
    if kind.names:
        name = _name(rng, kind)
        if rng.random() < 0.5:
            return _escaped_lines(
                rng, f"DEBUG=1\n{name.upper().replace('.', '_').replace('-', '_')}={secret}"
            )
        return '{"content":"' + _escaped(json.dumps({name: secret})) + '"}'
    escape = rng.choice(ESCAPES)
    if escape == '\\"':
        body = f'value \\"{secret}\\" set'
    elif escape == "\\\\":
        body = f"saved to C:\\\\keys\\\\{secret}"
    else:
        body = f"line one{escape}{secret}{rng.choice(ESCAPES[:3])}line three"
    return '{"path":"notes.md","content":"' + body + '"}'


def _env(rng: random.Random, kind: Kind, secret: str) -> str | None:
    name = _name(rng, kind).upper().replace(".", "_").replace("-", "_")
    return rng.choice(["{n}={s}", 'export {n}="{s}"', "# local\n{n}='{s}'"]).format(n=name, s=secret)


def _yaml(rng: random.Random, kind: Kind, secret: str) -> str | None:
    return rng.choice(["{n}: {s}", 'service:\n  {n}: "{s}"', "{n}: '{s}'"]).format(
        n=_name(rng, kind), s=secret
    )


def _toml(rng: random.Random, kind: Kind, secret: str) -> str | None:
    return rng.choice(['{n} = "{s}"', "[service]\n{n} = '{s}'"]).format(n=_name(rng, kind), s=secret)


def _xml_attribute(rng: random.Random, kind: Kind, secret: str) -> str | None:
    name = _name(rng, kind)
    return rng.choice(['<add key="{n}" value="{s}" />', '<setting {n}="{s}" />']).format(n=name, s=secret)


def _xml_element(rng: random.Random, kind: Kind, secret: str) -> str | None:
    return "<{n}>{s}</{n}>".format(n=_name(rng, kind), s=secret)


def _shell(rng: random.Random, kind: Kind, secret: str) -> str | None:
    if kind.names:
        flag = _name(rng, kind).lower().replace("_", "-").replace(".", "-")
        return f"./deploy.sh --{flag}={secret} --env prod"
    return rng.choice(
        ["./deploy.sh prod {s}", "echo {s} | docker login --password-stdin", "run-job {s} &"]
    ).format(s=secret)


def _url_query(rng: random.Random, kind: Kind, secret: str) -> str | None:
    if not kind.url_safe:
        return None
    param = _name(rng, kind) if kind.names else rng.choice(["token", "access_token", "api_key", "key"])
    return f"GET https://{rng.choice(_HOSTS)}/v2/items?page=2&{param}={secret}&sort=asc"


def _url_userinfo(rng: random.Random, kind: Kind, secret: str) -> str | None:
    if kind.names or not kind.url_safe:
        return None
    user = rng.choice(["x-access-token", "deploy", "ci"])
    return f"git clone https://{user}:{secret}@git.example.com/team/repo.git"


def _http_header(rng: random.Random, kind: Kind, secret: str) -> str | None:
    if kind.names:
        header = "-".join(part.capitalize() for part in _name(rng, kind).replace("_", "-").split("-"))
        return f"X-{header}: {secret}"
    return rng.choice(["Authorization: Bearer {s}", "X-Api-Key: {s}", "Authorization: token {s}"]).format(
        s=secret
    )


def _connection_string(rng: random.Random, kind: Kind, secret: str) -> str | None:
    if kind.names or ";" in secret:
        return None
    if kind.url_safe and rng.random() < 0.5:
        return f"DATABASE_URL=postgres://svc:{secret}@db.example.com:5432/app"
    return f"Server=tcp:db.example.com,1433;Database=app;User ID=svc;Password={secret};Encrypt=true;"


def _kubernetes_secret(rng: random.Random, kind: Kind, secret: str) -> str | None:
    name = _name(rng, kind)
    return f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  {name}: {secret}\n"


CARRIERS: dict[str, Carrier] = {
    "plain": _plain,
    "json-escaped": _json_escaped,
    "env": _env,
    "yaml": _yaml,
    "toml": _toml,
    "xml-attribute": _xml_attribute,
    "xml-element": _xml_element,
    "shell": _shell,
    "url-query": _url_query,
    "url-userinfo": _url_userinfo,
    "http-header": _http_header,
    "connection-string": _connection_string,
    "kubernetes-secret": _kubernetes_secret,
}


# ---- the forms of container families, per carrier -------------------------------------------------


def _block(secret: str, indent: str) -> str:
    return "\n".join(indent + line for line in secret.splitlines())


def _family_forms(rng: random.Random, kind: Kind, secret: str) -> dict[str, str]:
    """The lines a family kind's secret sits in, by carrier."""
    user = pick(rng, ALPHABETS["l"], 6)
    host = rng.choice(_HOSTS)
    one_line = _escaped(secret)
    block = _block(secret, "    " if kind.marker == "private-key" else "  ")
    teams = f"https://{pick(rng, ALPHABETS['l'], 8)}.webhook.office.com/webhookb2/"
    public = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 " + rng.randbytes(32)).decode()
    putty_head = "\n".join(
        [
            "PuTTY-User-Key-File-3: ssh-ed25519",
            "Encryption: none",
            f"Comment: {user}@laptop",
            "Public-Lines: 2",
            public[:64],
            public[64:],
            "Private-Lines: 1",
        ]
    )
    putty_mac = f"Private-MAC: {pick(rng, ALPHABETS['h'], 64)}"
    forms: dict[str, dict[str, str]] = {
        "private-key": {
            "plain": f"the deploy key:\n{secret}",
            "json-escaped": '{"path":"deploy_key.txt","content":"' + one_line + '\\n"}',
            "yaml": f"tls:\n  key: |\n{block}",
            "env": f'DEPLOY_KEY="{one_line}"',
            "kubernetes-secret": f"kind: Secret\nstringData:\n  tls.key: |\n{block}",
        },
        "putty-private-key": {
            "plain": f"$ cat deploy.ppk\n{putty_head}\n{secret}\n{putty_mac}",
            "json-escaped": '{"path":"deploy.txt","content":"'
            + _escaped(f"{putty_head}\n{secret}\n{putty_mac}")
            + '"}',
            "yaml": f"ppk: |\n{_block(putty_head, '  ')}\n  {secret}\n  {putty_mac}",
        },
        "jwt": {
            "plain": f"session {secret} expired",
            "json-escaped": _escaped_lines(rng, f"id_token: {secret}"),
            "http-header": f"Authorization: Bearer {secret}",
            "url-query": f"https://{host}/callback?id_token={secret}&state=ok",
            "env": f"SESSION_JWT={secret}",
        },
        "jwt-base64": {
            "plain": f"decoded from {secret} in the log",
            "json-escaped": _escaped_lines(rng, secret),
            "env": f"ENCODED_SESSION={secret}",
        },
        "microsoft-teams-webhook": {
            "plain": f"post alerts to {teams}{secret}",
            "json-escaped": _escaped_lines(rng, f"webhook: {teams}{secret}"),
            "env": f"TEAMS_HOOK={teams}{secret}",
            "yaml": f"notify:\n  url: {teams}{secret}",
        },
        "basic-auth-base64": {
            "http-header": f"Authorization: Basic {secret}",
            "json-escaped": '{"content":"' + _escaped(json.dumps({"auths": {host: {"auth": secret}}})) + '"}',
            "shell": f'curl -H "Authorization: Basic {secret}" https://{host}/v1',
        },
        "url-userinfo": {
            "plain": f"clone https://{user}:{secret}@git.example.com/r.git",
            "json-escaped": _escaped_lines(rng, f"remote: https://{user}:{secret}@{host}/r.git"),
            "env": f"REPO_URL=ftp://{user}:{secret}@{host}/pub",
            "yaml": f"registry: https://{user}:{secret}@{host}",
        },
        "connection-string": {
            "plain": f"connect to mongodb+srv://{user}:{secret}@cluster0.example.net/app",
            "json-escaped": _escaped_lines(rng, f"DATABASE_URL=postgresql://{user}:{secret}@{host}:5432/app"),
            "env": f"REDIS_URL=rediss://{user}:{secret}@{host}:6380/0",
            "connection-string": f"Server={host};Database=app;User Id={user};Password={secret};",
            "yaml": f"url: jdbc:mysql://{user}:{secret}@{host}:3306/app",
        },
        "curl-auth-user": {
            "plain": f"run curl -u {user}:{secret} https://{host}/v1",
            "json-escaped": '{"command":"curl -s -u ' + f"{user}:{secret}" + " https://" + host + '/v1"}',
            "shell": f"curl --user {user}:{secret} https://{host}/upload",
        },
        "curl-auth-user-continued": {
            "shell": f"curl https://{host}/v1/items \\\n  -H 'Accept: application/json' \\\n"
            f"  -d '{{}}' \\\n  -u {user}:{secret}",
            "json-escaped": '{"command":"'
            + _escaped(f"curl -X POST https://{host}/upload \\\n  -H 'Content-Type: text/plain' \\\n")
            + _escaped(f"  --user {user}:{secret} \\\n  -d @body.txt")
            + '"}',
            "plain": f"ran\ncurl -s https://{host}/v1 \\\r\n  -H 'Accept: */*' \\\r\n"
            f"  -u {user}:{secret}\nand it worked",
        },
        "curl-auth-header": {
            "shell": f'curl -H "Authorization: Bearer {secret}" https://{host}/v1',
            "json-escaped": '{"command":"curl -H \\"Authorization: Bearer '
            + secret
            + '\\" https://'
            + host
            + '"}',
            "plain": f"try curl -H 'Authorization: Bearer {secret}' https://{host}",
        },
        "url-query-secret": {
            "plain": f"download https://{host}/f.tgz?X-Amz-Signature={secret}&X-Amz-Expires=300",
            "json-escaped": _escaped_lines(rng, f"https://{host}/blob?sv=2022-11-02&sig={secret}"),
            "env": f"SIGNED_URL=https://{host}/export?access_token={secret}",
            "url-query": f"GET https://{host}/v1/items?page=2&token={secret}",
        },
        "cli-secret-flag": {
            "shell": rng.choice([f"mysql -u root -p{secret} app", f"vault login --token {secret}"]),
            "json-escaped": '{"command":"mytool --password=' + secret + ' --verbose"}',
            "plain": f"ran psql --password {secret} by mistake",
        },
        "api-key-header": {
            "http-header": f"X-Api-Key: {secret}",
            "json-escaped": '{"headers":"X-Auth-Token: ' + secret + '"}',
            "plain": f"curl -H 'PRIVATE-TOKEN: {secret}' https://{host}/api/v4/projects",
        },
        "cookie": {
            "http-header": f"Cookie: theme=dark; session={secret}; lang=en",
            "json-escaped": _escaped_lines(rng, f"Set-Cookie: sid={secret}; Path=/; HttpOnly"),
            "plain": f"the browser sent Cookie: session_id={secret}",
        },
        "kubernetes-secret-yaml": {
            "kubernetes-secret": f"kind: Secret\nmetadata:\n  name: db\ndata:\n  pw: {secret}\n",
            "json-escaped": _escaped_lines(rng, f"kind: Secret\ndata:\n  token: {secret}"),
            "yaml": f"data:\n  api-token: {secret}\nkind: Secret\n",
        },
        "nuget-config-password": {
            "xml-attribute": f'<add key="ClearTextPassword" value="{secret}" />',
            "json-escaped": '{"path":"nuget.config","content":"<add key=\\"Password\\" value=\\"'
            + secret
            + '\\" />"}',
            "plain": f'packageSourceCredentials: <add key="ClearTextPassword" value="{secret}" />',
        },
        "sidekiq-sensitive-url": {
            "plain": f"bundle config --global https://{secret}@gems.contribsys.com/",
            "json-escaped": _escaped_lines(rng, f"source 'https://{secret}@enterprise.contribsys.com/'"),
            "env": f"SIDEKIQ_SOURCE=https://{secret}@gems.contribsys.com/",
        },
        "keyed-value": {
            "plain": f"| variable | value |\n|---|---|\n| SERVICE_TOKEN | {secret} |",
            "json-escaped": '{"path":"conf.py","content":"os.environ.setdefault(\\"SERVICE_TOKEN\\", \\"'
            + secret
            + '\\")"}',
            "shell": f'printf "%s\\n" "DEPLOY_KEY,{secret}" >> keys.csv',
        },
        "netrc-password": {
            "plain": f"machine {host} login {user} password {secret}",
            "json-escaped": _escaped_lines(rng, f"machine {host}\n  login {user}\n  password {secret}"),
            "shell": f'printf "machine {host} login {user} password {secret}\\n" >> ~/.netrc',
        },
        "sql-password": {
            "plain": f"CREATE USER '{user}'@'%' IDENTIFIED BY '{secret}';",
            "json-escaped": _escaped_lines(rng, f"ALTER USER {user} IDENTIFIED BY '{secret}';"),
            "shell": f"mysql -u root -e \"CREATE USER '{user}'@'localhost' IDENTIFIED BY '{secret}'\"",
        },
        "azure-storage-account-key": {
            "connection-string": f"DefaultEndpointsProtocol=https;AccountName=app;AccountKey={secret};"
            "EndpointSuffix=core.windows.net",
            "json-escaped": _escaped_lines(rng, f"AZURE_STORAGE=AccountName=app;AccountKey={secret}"),
            "env": f'AZURE_STORAGE_CONNECTION_STRING="AccountName=app;AccountKey={secret};"',
        },
    }
    family = kind.id if kind.id in forms else kind.marker
    return forms[family]


def plant(rng: random.Random, kind: Kind, secret: str, carrier: str) -> tuple[str, str] | None:
    """(the secret as it reads there, the line it is planted in) for `carrier`, or None if it cannot
    sit there. A multi-line secret reads differently in a JSON-escaped or indented carrier."""
    if not kind.family:
        context = CARRIERS[carrier](rng, kind, secret)
        return None if context is None else (secret, context)
    context = _family_forms(rng, kind, secret).get(carrier)
    if context is None:
        return None
    for planted in (secret, _escaped(secret), _block(secret, "    "), _block(secret, "  ")):
        if planted in context:
            return planted, context
    raise ValueError(f"{kind.id}: the secret is not in its {carrier} form")


def carriers_for(kind: Kind) -> list[str]:
    """Every carrier a kind can be planted in, the JSON-escaped one first."""
    rng = random.Random(0)
    sample = kind.make(rng)
    names = [name for name in CARRIERS if plant(random.Random(1), kind, sample, name) is not None]
    return sorted(names, key=lambda name: name != "json-escaped")
