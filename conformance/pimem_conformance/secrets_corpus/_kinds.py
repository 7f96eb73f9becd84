"""The secret kinds of the corpus: one per published format, each tied to the source rules it follows.

A kind is either *bare* (a distinctive prefix or shape: it must be caught anywhere, with no key name
near it) or *named* (a vendor's key name makes it recognisable: it is planted under such a name).
Formats come from the public documentation of each source rule (gitleaks' default config, the
detect-secrets 1.5.0 plugins) and from this spec's families; values are random (see _formats.py).
`marker` is the class the spec's marker names for the kind: `[REDACTED:<marker>]`.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from ._formats import ALPHABETS, fill, pick

__all__ = ["KINDS", "Kind"]

Make = Callable[[random.Random], str]


@dataclass(frozen=True)
class Kind:
    id: str
    marker: str
    sources: tuple[str, ...]  # "gitleaks:<rule id>", "detect-secrets:<plugin>", "pimem-spec:<family>"
    make: Make
    names: tuple[str, ...] = ()  # key names it is planted under; empty for a bare kind
    url_safe: bool = True  # fits a URL's userinfo or query unescaped
    family: bool = False  # a container format (a key block, a header value) with its own carriers
    also: tuple[str, ...] = ()  # other markers that name it rightly (the generic families)
    prefixes: tuple[str, ...] = ()  # the literal text its formats start with: public, not secret

    @property
    def classes(self) -> tuple[str, ...]:
        return (self.marker, *self.also)


def _templates(*templates: str) -> Make:
    return lambda rng: fill(rng, rng.choice(templates))


def _url_safe(make: Make) -> bool:
    rng = random.Random(0)
    return not any(char in make(rng) for _ in range(20) for char in "/+=%@:#?&|;`")


def _bare(kind_id: str, *templates: str, marker: str = "", sources: tuple[str, ...] = ()) -> Kind:
    make = _templates(*templates)
    prefixes = tuple(template.split("{", 1)[0] for template in templates)
    sources = sources or (f"gitleaks:{kind_id}",)
    return Kind(kind_id, marker or kind_id, sources, make, (), _url_safe(make), prefixes=prefixes)


def _variants(words: str) -> tuple[str, ...]:
    """UPPER_SNAKE, snake, camelCase, dotted and kebab forms of a key name."""
    parts = words.split()
    camel = parts[0] + "".join(part.capitalize() for part in parts[1:])
    return ("_".join(parts).upper(), "_".join(parts), camel, ".".join(parts), "-".join(parts))


def _named(
    kind_id: str,
    words: str,
    *templates: str,
    marker: str = "",
    sources: tuple[str, ...] = (),
    names: tuple[str, ...] = (),
) -> Kind:
    """A kind planted under `names`, or the usual spellings of `words` (see _variants)."""
    make = _templates(*templates)
    prefixes = tuple(template.split("{", 1)[0] for template in templates)
    sources = sources or (f"gitleaks:{kind_id}",)
    names = names or _variants(words)
    return Kind(kind_id, marker or kind_id, sources, make, names, _url_safe(make), prefixes=prefixes)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    claims = {"sub": pick(rng, ALPHABETS["a"], 12), "iat": rng.randint(1_600_000_000, 1_800_000_000)}
    encoded = [_b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)]
    return ".".join([*encoded, _b64url(rng.randbytes(32))])


def _jwt_base64(rng: random.Random) -> str:
    return base64.b64encode(_jwt(rng).encode()).decode().rstrip("=")


def _pem(label: str, cut: bool = False) -> Make:
    def make(rng: random.Random) -> str:
        body = base64.b64encode(rng.randbytes(rng.randint(120, 400))).decode()
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        block = [f"-----BEGIN {label}-----", *lines]
        if not cut:
            block.append(f"-----END {label}-----")
        return "\n".join(block)

    return make


def _putty_private(rng: random.Random) -> str:
    """The private line of a PuTTY key file (its header and public lines are not secret)."""
    return base64.b64encode(rng.randbytes(48)).decode()


def _teams_webhook_path(rng: random.Random) -> str:
    """What follows `webhookb2/` in a Teams incoming-webhook URL: its secret part."""
    return fill(rng, "{u}@{u}/IncomingWebhook/{h:32}/{u}")


def _basic_auth(rng: random.Random) -> str:
    user = pick(rng, ALPHABETS["l"], 6)
    return base64.b64encode(f"{user}:{fill(rng, '{p:12,20}')}".encode()).decode()


def _special(
    kind_id: str, make: Make, *, marker: str = "", sources: tuple[str, ...] = (), family: bool = True
) -> Kind:
    return Kind(kind_id, marker or kind_id, sources or (f"gitleaks:{kind_id}",), make, (), False, family)


_DS = "detect-secrets:"
_SPEC = "pimem-spec:"

_BARE = (
    _bare(
        "1password-secret-key", "A3-{A:6}-{A:11}-{A:5}-{A:5}-{A:5}", "A3-{A:6}-{A:6}-{A:5}-{A:5}-{A:5}-{A:5}"
    ),
    _bare("1password-service-account-token", "ops_eyJ{n:260,300}"),
    _bare("adobe-client-secret", "p8e-{n:32}"),
    _bare("age-secret-key", "AGE-SECRET-KEY-1{8:58}"),
    _bare("airtable-personnal-access-token", "pat{n:14}.{h:64}"),
    _bare("alibaba-access-key-id", "LTAI{n:20}"),
    _bare("anthropic-admin-api-key", "sk-ant-admin01-{w:93}AA"),
    _bare("anthropic-api-key", "sk-ant-api03-{w:93}AA"),
    _bare("artifactory-api-key", "AKCp{n:69}"),
    _bare("artifactory-reference-token", "cmVmd{n:59}"),
    _bare("atlassian-api-token", "ATATT3{w:186}"),
    _bare(
        "authress-service-client-access-key",
        "sc_{a:12}.{a:5}.acc_{a:20}.{w:40}",
        "authress_{a:10}.{a:4}.acc-{a:16}.{w:50}",
    ),
    _bare("aws-access-token", "AKIA{B:16}", "ASIA{B:16}", "ABIA{B:16}", "ACCA{B:16}"),
    _bare("aws-amazon-bedrock-api-key-long-lived", "ABSK{b:120,200}"),
    _bare("aws-amazon-bedrock-api-key-short-lived", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{n:40,80}"),
    _bare("azure-ad-client-secret", "{n:3}{d:1}Q~{n:34}"),
    _bare("clickhouse-cloud-api-secret-key", "4b1d{n:38}"),
    _bare("clojars-api-token", "CLOJARS_{a:60}"),
    _bare("cloudflare-origin-ca-key", "v1.0-{h:24}-{h:146}"),
    _bare("databricks-api-token", "dapi{h:32}", "dapi{h:32}-2"),
    _bare("defined-networking-api-token", "dnkey-{a:26}-{a:52}"),
    _bare("digitalocean-access-token", "doo_v1_{h:64}"),
    _bare("digitalocean-pat", "dop_v1_{h:64}"),
    _bare("digitalocean-refresh-token", "dor_v1_{h:64}"),
    _bare("doppler-api-token", "dp.pt.{n:43}"),
    _bare("duffel-api-token", "duffel_test_{w:43}", "duffel_live_{w:43}"),
    _bare("dynatrace-api-token", "dt0c01.{A:24}.{A:64}"),
    _bare("easypost-api-token", "EZAK{n:54}"),
    _bare("easypost-test-api-token", "EZTK{n:54}"),
    _bare("facebook-page-access-token", "EAAM{n:120}", "EAAC{n:110}"),
    _bare("flutterwave-encryption-key", "FLWSECK_TEST{g:12}"),
    _bare("flutterwave-public-key", "FLWPUBK_TEST-{g:32}-X"),
    _bare("flutterwave-secret-key", "FLWSECK_TEST-{g:32}-X"),
    _bare("flyio-access-token", "fo1_{w:43}", "fm2_{b:120}", "fm1r_{b:110}"),
    _bare("frameio-api-token", "fio-u-{w:64}"),
    _bare("gcp-api-key", "AIza{w:35}"),
    _bare("github-app-token", "ghu_{n:36}", "ghs_{n:36}"),
    _bare("github-fine-grained-pat", "github_pat_{n:22}_{n:59}"),
    _bare("github-oauth", "gho_{n:36}"),
    _bare("github-pat", "ghp_{n:36}"),
    _bare("github-refresh-token", "ghr_{n:36}"),
    _bare("gitlab-cicd-job-token", "glcbt-{n:2}_{n:20}"),
    _bare("gitlab-deploy-token", "gldt-{n:20}"),
    _bare("gitlab-feature-flag-client-token", "glffct-{n:20}"),
    _bare("gitlab-feed-token", "glft-{n:20}"),
    _bare("gitlab-incoming-mail-token", "glimt-{n:25}"),
    _bare("gitlab-kubernetes-agent-token", "glagent-{n:50}"),
    _bare("gitlab-oauth-app-secret", "gloas-{n:64}"),
    _bare("gitlab-pat", "glpat-{n:20}"),
    _bare("gitlab-pat-routable", "glpat-{n:36}.01.{a:7}"),
    _bare("gitlab-ptt", "glptt-{h:40}"),
    _bare("gitlab-rrt", "GR1348941{n:20}"),
    _bare("gitlab-runner-authentication-token", "glrt-{n:20}"),
    _bare("gitlab-runner-authentication-token-routable", "glrt-t1_{n:30}.01.{a:7}"),
    _bare("gitlab-scim-token", "glsoat-{n:20}"),
    _bare("gitlab-session-cookie", "_gitlab_session={a:32}"),
    _bare("grafana-api-key", "eyJrIjoi{n:72,100}"),
    _bare("grafana-cloud-api-token", "glc_{n:40,60}"),
    _bare("grafana-service-account-token", "glsa_{n:32}_{h:8}"),
    _bare("harness-api-key", "pat.{w:22}.{n:24}.{n:20}", "sat.{w:22}.{n:24}.{n:20}"),
    _bare("hashicorp-tf-api-token", "{a:14}.atlasv1.{w:64}"),
    _bare("heroku-api-key-v2", "HRKU-AA{w:58}"),
    _bare("huggingface-access-token", "hf_{L:34}"),
    _bare("huggingface-organization-api-token", "api_org_{L:34}"),
    _bare("infracost-api-token", "ico-{n:32}"),
    _bare("intra42-client-secret", "s-s4t2ud-{h:64}", "s-s4t2af-{h:64}"),
    _bare("linear-api-key", "lin_api_{n:40}"),
    _bare("mailchimp-api-key", "{h:32}-us{d:2}"),
    _bare("mailgun-private-api-token", "key-{h:32}"),
    _bare("mailgun-pub-key", "pubkey-{h:32}"),
    _bare("mapbox-api-token", "pk.eyJ1{n:56}.{n:22}", "pk.{n:60}.{n:22}"),
    _bare("maxmind-license-key", "{n:6}_{n:29}_mmk"),
    _bare("new-relic-browser-api-token", "NRJS-{h:19}"),
    _bare("new-relic-insert-key", "NRII-{a:32}"),
    _bare("new-relic-user-api-key", "NRAK-{A:27}"),
    _bare("notion-api-token", "ntn_{d:11}{n:35}"),
    _bare("npm-access-token", "npm_{n:36}"),
    _bare("octopus-deploy-api-key", "API-{A:26}"),
    _bare(
        "openai-api-key",
        "sk-proj-{w:58}T3BlbkFJ{w:58}",
        "sk-{n:20}T3BlbkFJ{n:20}",
        "sk-svcacct-{w:74}T3BlbkFJ{w:74}",
    ),
    _bare("openshift-user-token", "sha256~{w:43}"),
    _bare("perplexity-api-key", "pplx-{n:48}"),
    _bare("plaid-api-token", "access-sandbox-{u}", "access-production-{u}"),
    _bare("planetscale-api-token", "pscale_tkn_{w:43}"),
    _bare("planetscale-oauth-token", "pscale_oauth_{w:43}"),
    _bare("planetscale-password", "pscale_pw_{w:43}"),
    _bare("postman-api-token", "PMAK-{h:24}-{h:34}"),
    _bare("prefect-api-token", "pnu_{n:36}"),
    _bare("pulumi-api-token", "pul-{h:40}"),
    _bare("pypi-upload-token", "pypi-AgEIcHlwaS5vcmc{w:60,90}"),
    _bare("readme-api-token", "rdme_{a:70}"),
    _bare("rubygems-api-token", "rubygems_{h:48}"),
    _bare("scalingo-api-token", "tk-us-{w:48}"),
    _bare("sendgrid-api-token", "SG.{w:22}.{w:43}"),
    _bare("sendinblue-api-token", "xkeysib-{h:64}-{n:16}"),
    _bare("sentry-org-token", "sntrys_eyJpYXQiO{n:60}LCJyZWdpb25fdXJs{n:40}_{n:43}"),
    _bare("sentry-user-token", "sntryu_{h:64}"),
    _bare("settlemint-application-access-token", "sm_aat_{n:16}"),
    _bare("settlemint-personal-access-token", "sm_pat_{n:16}"),
    _bare("settlemint-service-access-token", "sm_sat_{n:16}"),
    _bare("shippo-api-token", "shippo_live_{h:40}", "shippo_test_{h:40}"),
    _bare("shopify-access-token", "shpat_{h:32}"),
    _bare("shopify-custom-access-token", "shpca_{h:32}"),
    _bare("shopify-private-app-access-token", "shppa_{h:32}"),
    _bare("shopify-shared-secret", "shpss_{h:32}"),
    _bare("slack-app-token", "xapp-1-A{A:10}-{d:13}-{h:64}"),
    _bare("slack-bot-token", "xoxb-{d:12}-{d:13}-{n:24}"),
    _bare("slack-config-access-token", "xoxe.xoxp-1-{A:164}"),
    _bare("slack-config-refresh-token", "xoxe-1-{A:146}"),
    _bare("slack-legacy-bot-token", "xoxb-{d:10}-{n:22}"),
    _bare("slack-legacy-token", "xoxs-{d:10}-{d:11}-{d:12}-{h:64}"),
    _bare("slack-legacy-workspace-token", "xoxa-2-{n:40}", "xoxr-{n:30}"),
    _bare("slack-user-token", "xoxp-{d:12}-{d:12}-{d:12}-{h:32}"),
    _bare("slack-webhook-url", "https://hooks.slack.com/services/T{A:8}/B{A:10}/{n:24}"),
    _bare("sourcegraph-access-token", "sgp_{h:16}_{h:40}", "sgp_{h:40}"),
    _bare("square-access-token", "sq0atp-{w:22}", "EAAA{w:60}"),
    _bare("stripe-access-token", "sk_test_{n:24}", "sk_live_{n:24}", "rk_live_{n:24}", "rk_test_{n:99}"),
    _bare("telegram-bot-api-token", "{d:10}:AA{w:33}"),
    _bare("twilio-api-key", "SK{h:32}"),
    _bare("twitter-bearer-token", "AAAAAAAAAAAAAAAAAAAAAA{n:90}"),
    _bare("typeform-api-token", "tfp_{w:59}"),
    _bare("vault-batch-token", "hvb.{w:150}"),
    _bare("vault-service-token", "hvs.{w:95}"),
    _bare("yandex-api-key", "AQVN{w:36}"),
    _bare("microsoft-teams-webhook", "x"),  # replaced below: its URL is computed
    _bare(
        "discord-bot-token",
        "MT{n:22}.{w:6}.{w:27}",
        "OD{n:22}.{w:6}.{w:38}",
        sources=(f"{_DS}DiscordBotTokenDetector",),
    ),
    _bare("square-oauth-secret", "sq0csp-{w:43}", sources=(f"{_DS}SquareOAuthDetector",)),
    _bare("slack-token", "xoxo-{d:10}-{n:20}", sources=(f"{_DS}SlackDetector",)),
    # Formats their providers document that neither gitleaks' default rules nor detect-secrets name.
    _bare("braintree-access-token", "access_token$production${a:16}${h:32}", sources=("provider:braintree",)),
    _bare("buildkite-api-token", "bkua_{h:40}", sources=("provider:buildkite",)),
    _bare(
        "discord-webhook-url",
        "https://discord.com/api/webhooks/{d:18}/{w:68}",
        sources=("provider:discord",),
    ),
    _bare("docker-hub-pat", "dckr_pat_{w:27}", sources=("provider:docker-hub",)),
    _bare("figma-pat", "figd_{w:40}", sources=("provider:figma",)),
    _bare("google-oauth-access-token", "ya29.a0{w:120}", sources=("provider:google-oauth",)),
    _bare("google-oauth-client-secret", "GOCSPX-{w:28}", sources=("provider:google-oauth",)),
    _bare("groq-api-key", "gsk_{n:52}", sources=("provider:groq",)),
    _bare("netlify-pat", "nfp_{n:40}", sources=("provider:netlify",)),
    _bare("replicate-api-token", "r8_{n:37}", sources=("provider:replicate",)),
    _bare("stripe-webhook-secret", "whsec_{n:32}", sources=("provider:stripe",)),
    _bare("supabase-access-token", "sbp_{h:40}", sources=("provider:supabase",)),
    _bare("supabase-secret-key", "sb_secret_{w:31}", sources=("provider:supabase",)),
    _bare("xai-api-key", "xai-{n:80}", sources=("provider:xai",)),
)

_NAMED = (
    _named("adafruit-api-key", "adafruit io key", "{a:32}"),
    _named("adobe-client-id", "adobe client id", "{h:32}"),
    _named("airtable-api-key", "airtable api key", "{a:17}"),
    _named("algolia-api-key", "algolia api key", "{a:32}"),
    _named("alibaba-secret-key", "alibaba secret key", "{a:30}"),
    _named("asana-client-id", "asana client id", "{d:16}"),
    _named("asana-client-secret", "asana client secret", "{a:32}"),
    _named(
        "atlassian-api-token-named",
        "jira api token",
        "{a:20}{h:4}",
        sources=("gitleaks:atlassian-api-token",),
    ),
    _named("beamer-api-token", "beamer api token", "b_{a:44}"),
    _named("bitbucket-client-id", "bitbucket client id", "{a:32}"),
    _named("bitbucket-client-secret", "bitbucket client secret", "{w:64}"),
    _named(
        "bittrex-access-key",
        "bittrex access key",
        "{a:32}",
        sources=("gitleaks:bittrex-access-key", "gitleaks:bittrex-secret-key"),
    ),
    _named("cisco-meraki-api-key", "meraki api key", "{h:40}"),
    _named("cloudant-credentials", "cloudant password", "{h:64}", sources=(f"{_DS}CloudantDetector",)),
    _named("cloudflare-api-key", "cloudflare api token", "{w:40}"),
    _named("cloudflare-global-api-key", "cloudflare global api key", "{h:37}"),
    _named("codecov-access-token", "codecov token", "{a:32}"),
    _named("cohere-api-token", "cohere api key", "{n:40}"),
    _named("coinbase-access-token", "coinbase access token", "{w:64}"),
    _named("confluent-access-token", "confluent access token", "{a:16}"),
    _named("confluent-secret-key", "confluent secret key", "{a:64}"),
    _named("contentful-delivery-api-token", "contentful delivery token", "{w:43}"),
    _named("datadog-access-token", "datadog api key", "{a:40}"),
    _named("discord-api-token", "discord api token", "{h:64}"),
    _named("discord-client-id", "discord client id", "{d:18}"),
    _named("discord-client-secret", "discord client secret", "{w:32}"),
    _named("droneci-access-token", "droneci token", "{a:32}"),
    _named("dropbox-api-token", "dropbox api token", "{a:15}"),
    _named("dropbox-long-lived-api-token", "dropbox token", "{a:11}AAAAAAAAAA{w:43}"),
    _named("dropbox-short-lived-api-token", "dropbox access token", "sl.{w:135}"),
    _named("etsy-access-token", "etsy access token", "{a:24}"),
    _named("facebook-access-token", "facebook access token", "{d:15}|{w:32}"),
    _named("facebook-secret", "facebook app secret", "{h:32}"),
    _named("fastly-api-token", "fastly api token", "{w:32}"),
    _named("finicity-api-token", "finicity api token", "{h:32}"),
    _named("finicity-client-secret", "finicity client secret", "{a:20}"),
    _named("finnhub-access-token", "finnhub api token", "{a:20}"),
    _named("flickr-access-token", "flickr access token", "{a:32}"),
    _named("freemius-secret-key", "secret key", "sk_{n:29}"),
    _named("freshbooks-access-token", "freshbooks access token", "{a:64}"),
    _named("gitter-access-token", "gitter token", "{w:40}"),
    _named("gocardless-api-token", "gocardless access token", "live_{w:40}"),
    _named("hashicorp-tf-password", "administrator login password", "{w:12,20}"),
    _named("heroku-api-key", "heroku api key", "{u}"),
    _named("hubspot-api-key", "hubspot api key", "{u}"),
    _named("ibm-cloud-iam-key", "ibm cloud iam api key", "{w:44}", sources=(f"{_DS}IbmCloudIamDetector",)),
    _named(
        "ibm-cos-hmac-secret",
        "ibm cos hmac secret access key",
        "{h:48}",
        sources=(f"{_DS}IbmCosHmacDetector",),
    ),
    _named("intercom-api-key", "intercom access token", "{w:60}"),
    _named("jfrog-api-key", "artifactory api key", "{a:73}"),
    _named("jfrog-identity-token", "jfrog identity token", "{a:64}"),
    _named("kraken-access-token", "kraken private key", "{b:86}"),
    _named("kucoin-access-token", "kucoin api key", "{h:24}"),
    _named("kucoin-secret-key", "kucoin secret key", "{u}"),
    _named("launchdarkly-access-token", "launchdarkly sdk key", "{w:40}"),
    _named("linear-client-secret", "linear client secret", "{h:32}"),
    _named("linkedin-client-id", "linkedin client id", "{a:14}"),
    _named("linkedin-client-secret", "linkedin client secret", "{a:16}"),
    _named("lob-api-key", "lob api key", "live_{h:35}", "test_{h:35}"),
    _named("lob-pub-api-key", "lob publishable key", "test_pub_{h:31}", "live_pub_{h:31}"),
    _named("looker-client-id", "looker client id", "{a:20}"),
    _named("looker-client-secret", "looker client secret", "{a:24}"),
    _named("mailgun-signing-key", "mailgun signing key", "{g:32}-{g:8}-{g:8}"),
    _named("mattermost-access-token", "mattermost access token", "{a:26}"),
    _named("messagebird-api-token", "messagebird api key", "{a:25}"),
    _named("messagebird-client-id", "messagebird client id", "{u}"),
    _named("netlify-access-token", "netlify auth token", "{w:43}"),
    _named("new-relic-user-api-id", "new relic user api id", "{a:64}"),
    _named("nytimes-access-token", "nytimes api key", "{w:32}"),
    _named("okta-access-token", "okta api token", "00{w:40}"),
    _named("plaid-client-id", "plaid client id", "{a:24}"),
    _named("plaid-secret-key", "plaid secret", "{a:30}"),
    _named("privateai-api-token", "privateai api key", "{a:32}"),
    _named("rapidapi-access-token", "rapidapi key", "{w:50}"),
    _named("sendbird-access-id", "sendbird app id", "{u}"),
    _named("sendbird-access-token", "sendbird api token", "{h:40}"),
    _named("sentry-access-token", "sentry auth token", "{h:64}"),
    _named(
        "sidekiq-secret",
        "",
        "{h:8}:{h:8}",
        names=(
            "BUNDLE_GEMS__CONTRIBSYS__COM",
            "BUNDLE_ENTERPRISE__CONTRIBSYS__COM",
            "bundle_gems__contribsys__com",
        ),
    ),
    _named("snyk-api-token", "snyk api token", "{u}"),
    _named("softlayer-api-key", "softlayer api key", "{a:64}", sources=(f"{_DS}SoftlayerDetector",)),
    _named("sonar-api-token", "sonar token", "squ_{a:40}", "{a:40}"),
    _named(
        "sourcegraph-access-token-named",
        "sourcegraph token",
        "{h:40}",
        sources=("gitleaks:sourcegraph-access-token",),
    ),
    _named("squarespace-access-token", "squarespace api key", "{u}"),
    _named("sumologic-access-id", "sumo access id", "su{n:12}"),
    _named("sumologic-access-token", "sumo access key", "{n:64}"),
    _named("travisci-access-token", "travis api token", "{a:22}"),
    _named("twitch-api-token", "twitch client secret", "{a:30}"),
    _named("twitter-access-secret", "twitter access secret", "{a:45}"),
    _named("twitter-access-token", "twitter access token", "{d:19}-{n:30}"),
    _named("twitter-api-key", "twitter api key", "{a:25}"),
    _named("twitter-api-secret", "twitter api secret", "{a:50}"),
    _named(
        "vault-service-token-legacy", "vault token", "s.{n:24}", sources=("gitleaks:vault-service-token",)
    ),
    _named("yandex-access-token", "yandex access token", "t1.{w:20}.{w:86}"),
    _named("yandex-aws-access-token", "yandex static key", "YC{w:38}"),
    _named("zendesk-secret-key", "zendesk api token", "{a:40}"),
    _named(
        "aws-secret",
        "aws secret access key",
        "{b:40}",
        sources=(f"{_DS}AWSKeyDetector", f"{_SPEC}aws-secret"),
    ),
    _named(
        "generic-api-key",
        "service key",
        "{n:32}",
        "{n:40}",
        sources=("gitleaks:generic-api-key", f"{_DS}Base64HighEntropyString", f"{_DS}HexHighEntropyString"),
    ),
    _named(
        "assignment",
        "database password",
        "{p:12,20}",
        "{n:8}{d:3}!",
        sources=(f"{_DS}KeywordDetector", f"{_SPEC}assignment"),
    ),
)

_SPECIAL = (
    _special("private-key", _pem("RSA PRIVATE KEY")),
    _special(
        "private-key-pkcs8",
        _pem("PRIVATE KEY"),
        marker="private-key",
        sources=("gitleaks:private-key", f"{_DS}PrivateKeyDetector"),
    ),
    _special(
        "private-key-cut-off",
        _pem("EC PRIVATE KEY", cut=True),
        marker="private-key",
        sources=("gitleaks:private-key", f"{_SPEC}private-key"),
    ),
    _special(
        "openssh-private-key",
        _pem("OPENSSH PRIVATE KEY"),
        marker="private-key",
        sources=("gitleaks:private-key", f"{_SPEC}private-key"),
    ),
    _special(
        "pgp-private-key",
        _pem("PGP PRIVATE KEY BLOCK"),
        marker="private-key",
        sources=("gitleaks:private-key", f"{_SPEC}private-key"),
    ),
    _special(
        "putty-private-key", _putty_private, sources=(f"{_DS}PrivateKeyDetector", f"{_SPEC}putty-private-key")
    ),
    _special("jwt", _jwt, sources=("gitleaks:jwt", f"{_DS}JwtTokenDetector")),
    _special("jwt-base64", _jwt_base64),
    _special("microsoft-teams-webhook", _teams_webhook_path),
    _special("azure-storage-account-key", _templates("{b:86}=="), sources=(f"{_DS}AzureStorageKeyDetector",)),
    _special("basic-auth-base64", _basic_auth, marker="auth-header", sources=(f"{_SPEC}auth-header",)),
)

# Passwords in the families that carry them: URLs, connection strings, command lines.
_PASSWORDS = (
    Kind(
        "sidekiq-sensitive-url",
        "sidekiq-sensitive-url",
        ("gitleaks:sidekiq-sensitive-url",),
        _templates("{h:8}:{h:8}"),
        family=True,
    ),
    Kind(
        "url-userinfo",
        "url-userinfo",
        (f"{_DS}BasicAuthDetector", f"{_SPEC}url-userinfo"),
        _templates("{n:8}{d:2}{n:4}"),
        family=True,
    ),
    Kind(
        "connection-string",
        "connection-string",
        (f"{_SPEC}connection-string",),
        _templates("{n:10}{d:3}"),
        family=True,
    ),
    Kind(
        "curl-auth-user",
        "curl-auth-user",
        ("gitleaks:curl-auth-user",),
        _templates("{n:10}{d:2}"),
        family=True,
    ),
    Kind(
        "curl-auth-header", "auth-header", ("gitleaks:curl-auth-header",), _templates("{n:24}"), family=True
    ),
    Kind(
        "url-query-secret",
        "url-query-secret",
        (f"{_SPEC}url-query-secret",),
        _templates("{n:32}", "{h:64}"),
        family=True,
    ),
    Kind(
        "cli-secret-flag",
        "cli-secret-flag",
        (f"{_SPEC}cli-secret-flag",),
        _templates("{n:12}{d:2}"),
        family=True,
    ),
    Kind("api-key-header", "api-key-header", (f"{_SPEC}api-key-header",), _templates("{n:32}"), family=True),
    Kind("cookie", "cookie", (f"{_SPEC}cookie",), _templates("{n:32}", "{h:40}"), family=True),
    Kind(
        "kubernetes-secret-yaml",
        "kubernetes-secret-yaml",
        ("gitleaks:kubernetes-secret-yaml",),
        _templates("{b:24}=="),
        family=True,
    ),
    Kind(
        "nuget-config-password",
        "nuget-config-password",
        ("gitleaks:nuget-config-password",),
        _templates("{p:12,18}"),
        family=True,
    ),
    Kind("keyed-value", "keyed-value", (f"{_SPEC}keyed-value",), _templates("{n:40}", "{h:32}"), family=True),
    Kind(
        "netrc-password",
        "netrc-password",
        (f"{_SPEC}netrc-password",),
        _templates("{n:10}{d:3}"),
        family=True,
    ),
    Kind("sql-password", "sql-password", (f"{_SPEC}sql-password",), _templates("{n:12}{d:2}"), family=True),
)

# Formats tried from their public descriptions that leaked (since 0.2.0, JM-REDACT-072): Facebook's
# app access token (app id, `|`, app secret) and user access tokens (`EAA…`), the legacy Vault
# service token under a key name that only says `token`, and curl's `-u` lines after `curl`.
_PUBLIC_FORMATS = (
    _bare(
        "facebook-app-access-token",
        "{d:15}|{h:32}",
        "{d:16}|{h:32}",
        sources=("gitleaks:facebook-access-token", "provider:facebook"),
    ),
    _bare(
        "facebook-user-access-token",
        "EAAG{n:150,200}",
        "EAAJ{n:120}",
        marker="facebook-page-access-token",
        sources=("gitleaks:facebook-page-access-token", "provider:facebook"),
    ),
    _named(
        "vault-service-token-legacy-token-key",
        "",
        "s.{n:24}",
        marker="vault-service-token-legacy",
        sources=("gitleaks:vault-service-token", "provider:vault"),
        names=("token", "client_token", "clientToken", "auth.client_token", "VAULT_TOKEN"),
    ),
    Kind(
        "curl-auth-user-continued",
        "curl-auth-user",
        ("gitleaks:curl-auth-user", "provider:curl"),
        _templates("{n:10}{d:2}"),
        family=True,
    ),
)

_GENERIC_FAMILIES = (
    "assignment",
    "generic-api-key",
    "url-query-secret",
    "api-key-header",
    "kubernetes-secret-yaml",
)
_ALSO = {
    "generic-api-key": _GENERIC_FAMILIES,
    "assignment": (*_GENERIC_FAMILIES, "cli-secret-flag"),
    "basic-auth-base64": ("assignment",),
    "kubernetes-secret-yaml": ("assignment",),
}

# The detect-secrets plugins whose formats a gitleaks-named kind also follows.
_ALSO_FOLLOWS = {
    "GitHubTokenDetector": ("github-pat", "github-oauth", "github-app-token", "github-refresh-token"),
    "GitLabTokenDetector": (
        "gitlab-pat",
        "gitlab-deploy-token",
        "gitlab-runner-authentication-token",
        "gitlab-rrt",
    ),
    "ArtifactoryDetector": ("artifactory-api-key",),
    "MailchimpDetector": ("mailchimp-api-key",),
    "NpmDetector": ("npm-access-token",),
    "OpenAIDetector": ("openai-api-key",),
    "PypiTokenDetector": ("pypi-upload-token",),
    "SendGridDetector": ("sendgrid-api-token",),
    "StripeDetector": ("stripe-access-token",),
    "TelegramBotTokenDetector": ("telegram-bot-api-token",),
    "TwilioKeyDetector": ("twilio-api-key",),
    "SlackDetector": ("slack-webhook-url", "slack-bot-token"),
    "PrivateKeyDetector": ("private-key", "openssh-private-key"),
}
_FOLLOWED = {kind: plugin for plugin, kinds in _ALSO_FOLLOWS.items() for kind in kinds}


def _with_sources(kind: Kind) -> Kind:
    plugin = _FOLLOWED.get(kind.id)
    return replace(kind, sources=(*kind.sources, f"{_DS}{plugin}")) if plugin else kind


KINDS: tuple[Kind, ...] = tuple(
    _with_sources(replace(kind, also=tuple(c for c in _ALSO.get(kind.id, ()) if c != kind.marker)))
    for kind in (*_BARE, *_NAMED, *_SPECIAL, *_PASSWORDS, *_PUBLIC_FORMATS)
    if kind.make(random.Random(0)) != "x"
)
