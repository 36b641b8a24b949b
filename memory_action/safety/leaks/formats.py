"""Layer (a): token formats that providers document, found anywhere in the text.

Each rule is written from the provider's own description of its format: a fixed prefix, a length,
an alphabet, a checksum where one exists (GitHub's CRC32). A rule is anchored on its prefix (a
cheap ``in`` test skips it when the prefix is absent) and every quantifier is bounded, so a MiB
is scanned in well under a second. Formats without a prefix (Azure storage keys, Twilio tokens,
legacy 40-hex keys) are left to the context layer: on their own they look like any hash.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from memory_action.safety.leaks.candidate import JWT, PRIORITY, PRIVATE_KEY, SPECIFIC, Candidate

_B = r"(?<![A-Za-z0-9_])"  # a token starts at a word boundary
_E = r"(?![A-Za-z0-9_])"  # ... and ends at one
_ED = r"(?![A-Za-z0-9_-])"  # ... for alphabets that hold a dash
_URLSAFE = r"[A-Za-z0-9_-]"
_HEX = r"[a-f0-9]"
_UUID = r"[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"


@dataclass(frozen=True, kw_only=True)
class TokenFormat:
    """A documented token format: the kind named in findings, a literal every match holds."""

    kind: str
    marker: str
    pattern: re.Pattern[str]
    # A match that passes this is a token even if it looks like a placeholder (a checksum).
    proof: Callable[[str], bool] | None = None
    # A match that fails this is not the format (a decoded header that says otherwise).
    check: Callable[[str], bool] | None = None


def _f(
    kind: str,
    marker: str,
    pattern: str,
    *,
    proof: Callable[[str], bool] | None = None,
    check: Callable[[str], bool] | None = None,
) -> TokenFormat:
    return TokenFormat(
        kind=kind, marker=marker, pattern=re.compile(pattern), proof=proof, check=check
    )


# --- checks that need more than a regex ---------------------------------------------------------

_BASE62 = string.digits + string.ascii_letters
_BASE62_UPPER_FIRST = string.digits + string.ascii_uppercase + string.ascii_lowercase


def github_checksum_ok(token: str) -> bool:
    """GitHub's new tokens end in a base62 CRC32 of the 30 random characters before it."""
    body = token.rsplit("_", 1)[-1]
    if len(body) != 36:
        return False
    crc = zlib.crc32(body[:30].encode("ascii", "replace"))
    return body[30:] in {_base62(crc, _BASE62), _base62(crc, _BASE62_UPPER_FIRST)}


def _base62(number: int, alphabet: str) -> str:
    digits = ""
    while number:
        number, rest = divmod(number, 62)
        digits = alphabet[rest] + digits
    return digits.rjust(6, "0")


def _decodes_to(prefix_test: Callable[[str], bool], *, skip: int = 0) -> Callable[[str], bool]:
    """A check that base64-decodes the match (from ``skip``) and tests the text it holds."""

    def check(token: str) -> bool:
        chunk = token[skip:]
        chunk = chunk[: len(chunk) // 4 * 4]
        try:
            decoded = base64.b64decode(chunk, altchars=b"-_", validate=False)
        except (binascii.Error, ValueError):
            return False
        return prefix_test(decoded.decode("latin-1"))

    return check


def _discord_id_ok(token: str) -> bool:
    """A Discord bot token starts with the base64 of the bot's numeric user id."""
    head = token.split(".", 1)[0]
    padded = head + "=" * (-len(head) % 4)
    try:
        decoded = base64.b64decode(padded, altchars=b"-_").decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return decoded.isdigit() and 15 <= len(decoded) <= 21


# --- the formats --------------------------------------------------------------------------------

TOKEN_FORMATS: tuple[TokenFormat, ...] = (
    # GitHub: ghp_ (classic PAT), gho_ (OAuth), ghu_/ghs_ (App user/server), ghr_ (refresh).
    _f("GitHub token", "gh", _B + r"gh[pousr]_[A-Za-z0-9]{36,251}" + _E, proof=github_checksum_ok),
    _f("GitHub token", "github_pat_", _B + r"github_pat_[A-Za-z0-9_]{80,250}" + _E),
    # GitLab: personal, deploy, runner, trigger, feed, incoming mail, agent, OAuth, CI job...
    _f(
        "GitLab token",
        "gl",
        _B + r"gl(?:pat|dt|rt|rtr|ptt|soat|ft|imt|agent|oas|cbt|ffct|wt)-[A-Za-z0-9_.-]{20,300}"
        r"(?<!\.)" + _ED,
    ),
    _f("GitLab token", "GR1348941", _B + r"GR1348941[A-Za-z0-9_-]{20,40}" + _ED),
    # AWS access key ids (the secret key has no prefix: the context layer finds it by name).
    _f("AWS access key id", "A", _B + r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _E),
    # Google
    _f("Google API key", "AIza", _B + r"AIza" + _URLSAFE + r"{35}" + _ED),
    _f("Google OAuth client secret", "GOCSPX-", _B + r"GOCSPX-" + _URLSAFE + r"{28}" + _ED),
    _f("Google OAuth token", "ya29.", _B + r"ya29\.[A-Za-z0-9_.-]{30,2048}"),
    _f("Google OAuth token", "1//0", r"(?<![A-Za-z0-9/])1//0[A-Za-z0-9_-]{30,512}"),
    # OpenAI (project, service account, admin, legacy) and others using sk- keys.
    _f("OpenAI API key", "sk-", _B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,300}"),
    _f("OpenAI API key", "T3BlbkFJ", _B + r"sk-[A-Za-z0-9_-]{16,100}T3BlbkFJ[A-Za-z0-9_-]{16,100}"),
    _f("OpenRouter API key", "sk-or-", _B + r"sk-or-v1-" + _HEX + r"{64}" + _E),
    _f("Anthropic API key", "sk-ant-", _B + r"sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{32,300}"),
    _f("API key (sk-)", "sk-", _B + r"sk-[A-Za-z0-9]{32,100}" + _ED),
    # Slack
    _f(
        "Slack token",
        "xo",
        # The digit is looked for within the token's own 250 characters: an unbounded look ahead
        # rescans the rest of the run from every "xoxb-" in it (quadratic on "xoxb-" repeated).
        _B + r"xox[abposre](?:\.xox[bp])?-(?=[A-Za-z0-9-]{0,249}\d)[A-Za-z0-9-]{10,250}" + _E,
    ),
    _f("Slack token", "xapp-", _B + r"xapp-\d-[A-Z0-9]{6,20}-\d{6,20}-[a-f0-9]{20,80}" + _E),
    _f(
        "Slack webhook URL",
        "hooks.slack.com",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{16,255}",
    ),
    # Payments
    _f("Stripe key", "k_", _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,250}" + _E),
    _f("Stripe webhook secret", "whsec_", _B + r"whsec_[A-Za-z0-9+/=]{32,100}"),
    _f("Square token", "EAAA", _B + r"EAAA[A-Za-z0-9_-]{60}" + _ED),
    _f("Square token", "sq0", _B + r"sq0(?:atp|csp|idp)-[A-Za-z0-9_-]{22,43}" + _ED),
    _f(
        "Braintree token",
        "access_token$",
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
    ),
    _f("Flutterwave key", "FLWSECK", _B + r"FLWSECK(?:_TEST)?-[a-f0-9]{32}-X"),
    _f("Shippo token", "shippo_", _B + r"shippo_(?:live|test)_[a-f0-9]{40}" + _E),
    _f("EasyPost key", "EZ", _B + r"EZ[AT]K[A-Za-z0-9]{54}" + _E),
    # Package registries and CI
    _f("npm token", "npm_", _B + r"npm_[A-Za-z0-9]{36}" + _E),
    _f("PyPI token", "pypi-AgE", _B + r"pypi-AgE[A-Za-z0-9_-]{50,1000}"),
    _f("RubyGems key", "rubygems_", _B + r"rubygems_[a-f0-9]{48}" + _E),
    _f("NuGet key", "oy2", _B + r"oy2[a-z0-9]{43}" + _E),
    _f("crates.io token", "cio", _B + r"cio[A-Za-z0-9]{32}" + _E),
    _f("Docker Hub token", "dckr_", _B + r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,80}" + _ED),
    _f("JFrog key", "AKCp", _B + r"AKCp[A-Za-z0-9]{69}" + _E),
    _f("JFrog token", "cmVmdGtu", _B + r"cmVmdGtuOjAxOj[A-Za-z0-9]{40,100}" + _E),
    _f("Hugging Face token", "hf_", _B + r"hf_[A-Za-z0-9]{34,40}" + _E),
    _f("Hugging Face token", "api_org_", _B + r"api_org_[A-Za-z0-9]{34}" + _E),
    _f("Buildkite token", "bkua_", _B + r"bkua_[a-f0-9]{40}" + _E),
    _f("CircleCI token", "CCIPAT_", _B + r"CCIPAT_[A-Za-z0-9]{20,24}_[a-f0-9]{40}" + _E),
    _f("SonarQube token", "sq", _B + r"sq[pua]_[a-f0-9]{40}" + _E),
    _f("Sourcegraph token", "sgp_", _B + r"sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}" + _E),
    _f("Harness token", "pat.", _B + r"pat\.[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20}"),
    _f("Octopus Deploy key", "API-", _B + r"API-[A-Z0-9]{26,32}" + _E),
    _f("Postman key", "PMAK-", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E),
    _f("Pulumi token", "pul-", _B + r"pul-[a-f0-9]{40}" + _E),
    _f("Prefect key", "pnu_", _B + r"pnu_[A-Za-z0-9]{36}" + _E),
    _f("ReadMe key", "rdme_", _B + r"rdme_[a-z0-9]{70}" + _E),
    _f("Infracost key", "ico-", _B + r"ico-[A-Za-z0-9]{32}" + _E),
    # Cloud platforms
    _f("Azure AD client secret", "Q~", _B + r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}" + _ED),
    _f("Azure DevOps token", "AZDO", _B + r"[A-Za-z0-9]{52}AZDO[A-Za-z0-9]{28}" + _E),
    _f(
        "Azure SAS signature",
        "sig=",
        r"(?<![A-Za-z0-9_])sig=[A-Za-z0-9%+/]{30,200}(?:%3[Dd]|=){0,2}",
    ),
    # Cloudflare Origin CA keys "always start with v1.0-", then hex parts split by a dash.
    _f("Cloudflare Origin CA key", "v1.0-", r"\bv1\.0-[a-f0-9]{16,64}-[a-f0-9]{64,256}\b"),
    _f("DigitalOcean token", "_v1_", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E),
    _f("Heroku key", "HRKU-", _B + r"HRKU-[A-Za-z0-9_-]{40,80}" + _ED),
    _f("Netlify token", "nf", _B + r"nf[pcou]_[A-Za-z0-9]{36,40}" + _E),
    _f("Fly.io token", "fo1_", _B + r"fo1_[A-Za-z0-9_-]{43}" + _ED),
    _f("Fly.io token", "fm", _B + r"fm[12][ar]?_[A-Za-z0-9+/=_,-]{50,1000}"),
    _f("Supabase token", "sb", _B + r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,80})" + _ED),
    _f("PlanetScale token", "pscale_", _B + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}"),
    _f("Neon key", "napi_", _B + r"napi_[a-z0-9]{64}" + _E),
    _f("Render key", "rnd_", _B + r"rnd_[A-Za-z0-9]{32}" + _E),
    _f("Alibaba Cloud key id", "LTAI", _B + r"LTAI[A-Za-z0-9]{12,20}" + _E),
    _f("Tencent Cloud key id", "AKID", _B + r"AKID[A-Za-z0-9]{32}" + _E),
    _f("Yandex Cloud key", "AQVN", _B + r"AQVN[A-Za-z0-9_-]{35,38}" + _ED),
    _f("Tailscale key", "tskey-", _B + r"tskey-[a-z]+-[A-Za-z0-9]{6,40}-[A-Za-z0-9]{20,60}" + _E),
    _f("Databricks token", "dapi", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    _f("Databricks token", "dose", _B + r"dose[a-f0-9]{32}" + _E),
    # Secrets managers
    _f("Vault token", "hv", _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,500}" + _ED),
    _f(
        "Terraform Cloud token",
        ".atlasv1.",
        _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,90}",
    ),
    _f(
        "Doppler token",
        "dp.",
        _B + r"dp\.(?:st|sa|ct|pt|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}" + _E,
    ),
    _f("1Password token", "ops_eyJ", _B + r"ops_eyJ[A-Za-z0-9+/=_-]{100,2000}"),
    _f("Infisical token", "st.", _B + r"st\.[a-f0-9-]{36}\.[a-f0-9]{32}\.[a-f0-9]{32}" + _E),
    _f("age secret key", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}"),
    # Observability
    _f("Grafana token", "glc_", _B + r"glc_[A-Za-z0-9+/]{32,400}={0,2}"),
    _f("Grafana token", "glsa_", _B + r"glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}" + _E),
    _f("Grafana API key", "eyJrIjoi", _B + r"eyJrIjoi[A-Za-z0-9+/]{40,400}={0,2}"),
    _f("New Relic key", "NR", _B + r"NR(?:AK|II|AA|SP)-[A-Za-z0-9_-]{19,32}" + _ED),
    _f("New Relic key", "NRJS-", _B + r"NRJS-[a-f0-9]{19}" + _E),
    _f("New Relic license key", "NRAL", _B + r"[a-f0-9]{36}NRAL" + _E),
    _f("Sentry token", "sntry", _B + r"sntry[su]_[A-Za-z0-9+/=_-]{40,400}"),
    _f("Dynatrace token", "dt0", _B + r"dt0[a-z]\d{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}" + _E),
    _f("Datadog token", "dd", _B + r"dd(?:pat|sat|app)_[A-Za-z0-9]{32,64}" + _E),
    _f("Honeycomb key", "hc", _B + r"hc[a-z]{2}k_[a-z0-9]{58}" + _E),
    _f("LaunchDarkly key", "-", _B + r"(?:api|sdk|mob)-" + _UUID + _E),
    # Messaging and e-mail
    _f(
        "SendGrid API key",
        "SG.",
        _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _ED,
    ),
    # Mailgun's private keys: key- and 32 characters of lower-case letters and digits.
    _f("Mailgun API key", "key-", _B + r"key-(?=[a-z]*[0-9])[a-z0-9]{32}" + _E),
    _f("Mailgun API key", "-", _B + r"[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8}" + _E),
    _f("Mailchimp API key", "-us", _B + r"[a-f0-9]{32}-us\d{1,2}" + _E),
    _f("Mandrill key", "md-", _B + r"md-[A-Za-z0-9_-]{22}" + _ED),
    _f("Brevo key", "sib-", _B + r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _E),
    _f("Resend key", "re_", _B + r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}" + _E),
    _f(
        "Discord bot token",
        ".",
        _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _ED,
        check=_discord_id_ok,
    ),
    _f(
        "Discord webhook URL",
        "/api/webhooks/",
        r"discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_-]{60,70}",
    ),
    _f(
        "Telegram bot token",
        ":",
        r"(?:(?<=/bot)|(?<![A-Za-z0-9_]))\d{8,10}:[A-Za-z0-9_-]{35}" + _ED,
    ),
    _f(
        "Microsoft Teams webhook URL",
        "webhook.office.com",
        r"webhook\.office\.com/webhookb2/[A-Za-z0-9@-]{40,100}/IncomingWebhook/[a-f0-9]{32}"
        r"/[A-Za-z0-9-]{36}(?:/[A-Za-z0-9_-]{20,80})?",
    ),
    _f(
        "Google Chat webhook URL",
        "chat.googleapis.com",
        r"chat\.googleapis\.com/v1/spaces/[A-Za-z0-9_-]{8,20}/messages\?[A-Za-z0-9=&_%.-]{40,400}",
    ),
    _f("Zapier webhook URL", "hooks.zapier.com", r"hooks\.zapier\.com/hooks/catch/\d+/[a-z0-9]+"),
    _f("IFTTT key", "ifttt.com", r"maker\.ifttt\.com/(?:trigger/[\w-]+/)?with/key/[\w-]{20,30}"),
    _f("Feishu webhook URL", "/bot/v2/hook/", r"/open-apis/bot/v2/hook/[A-Za-z0-9-]{30,40}"),
    _f("Firebase server key", ":APA91b", _B + r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}"),
    # Productivity and SaaS APIs
    _f("Shopify token", "shp", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E),
    _f("Linear API key", "lin_", _B + r"lin_(?:api_[A-Za-z0-9]{40}|oauth_[a-f0-9]{64})" + _E),
    _f("Notion token", "secret_", _B + r"secret_[A-Za-z0-9]{43}" + _E),
    # Notion's integration secrets: ntn_ and about 43 to 46 letters and digits (the length is
    # not documented, so a range; placeholders of x's are turned away by ``_plausible``).
    _f("Notion token", "ntn_", _B + r"ntn_(?=[A-Za-z]*[0-9])[A-Za-z0-9]{40,50}" + _E),
    _f("Airtable token", "pat", _B + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _E),
    _f("Atlassian token", "AT", _B + r"AT(?:ATT|CTT|BB)[A-Za-z0-9_=.-]{24,300}" + _ED),
    _f("Figma token", "figd_", _B + r"figd_[A-Za-z0-9_-]{40,45}" + _ED),
    _f("Contentful token", "CFPAT-", _B + r"CFPAT-[A-Za-z0-9_-]{43}" + _ED),
    _f("Typeform token", "tfp_", _B + r"tfp_[A-Za-z0-9_.=-]{40,60}"),
    _f("HubSpot token", "pat-", _B + r"pat-(?:na|eu|ap)\d-" + _UUID + _E),
    _f("Asana token", "/", _B + r"[12]/\d{10,20}(?:/\d{10,20})?:[a-f0-9]{32}" + _E),
    _f("Intercom token", "dG9rO", _B + r"dG9rO[A-Za-z0-9+/=_-]{40,200}"),
    _f(
        "Plaid access token",
        "access-",
        _B + r"access-(?:sandbox|development|production)-" + _UUID + _E,
    ),
    _f("Salesforce token", "!", _B + r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9._-]{40,200}"),
    _f("Adafruit IO key", "aio_", _B + r"aio_[A-Za-z0-9]{28}" + _E),
    _f("Dropbox token", "sl.", _B + r"sl\.[A-Za-z0-9_.-]{100,1400}"),
    _f("Mapbox token", "k.eyJ", _B + r"[st]k\.eyJ[A-Za-z0-9_-]{10,400}\.[A-Za-z0-9_-]{20,100}"),
    _f("Twitter bearer token", "AAAAAAAAAAAAAAAAAAAAA", r"A{20,22}[A-Za-z0-9%]{30,200}"),
    _f("Facebook access token", "EAA", _B + r"EAA[A-Za-z0-9]{80,400}" + _E),
    # AI providers
    _f("DeepL API key", ":fx", _B + _UUID + r":fx" + _E),  # free keys: a UUID and ":fx"
    _f(
        "Tavily API key",
        "tvly-",
        _B + r"tvly-(?:dev-|prod-)?(?=[A-Za-z]*[0-9])[A-Za-z0-9]{20,64}" + _E,
    ),
    _f("Groq API key", "gsk_", _B + r"gsk_[A-Za-z0-9]{52}" + _E),
    _f("Replicate token", "r8_", _B + r"r8_[A-Za-z0-9]{37}" + _E),
    _f("Perplexity API key", "pplx-", _B + r"pplx-[A-Za-z0-9]{48}" + _E),
    _f("xAI API key", "xai-", _B + r"xai-[A-Za-z0-9]{70,90}" + _E),
    _f("Fireworks API key", "fw_", _B + r"fw_[A-Za-z0-9]{24}" + _E),
    _f("Pinecone API key", "pcsk_", _B + r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,80}" + _E),
    _f("LangSmith key", "lsv2_", _B + r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}" + _E),
    # Encoded private keys: kubeconfig client-key-data, Kubernetes secrets (base64 of a PEM key)
    _f(
        PRIVATE_KEY,
        "LS0tLS1CRUdJTi",
        r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,20000}={0,2}",
        check=_decodes_to(lambda head: "PRIVATE KEY" in head[:80]),
    ),
)

_PLACEHOLDER_TOKEN = re.compile(r"(?i)xxxx|\*\*\*|\.\.\.|example|0123456789|abcdefgh|your")


def _plausible(token: str) -> bool:
    """Not a documented placeholder like ``ghp_xxxx...`` or ``AKIAIOSFODNN7EXAMPLE``."""
    tail = token[-24:]
    return len(set(tail)) >= min(8, len(tail) // 2) and _PLACEHOLDER_TOKEN.search(token) is None


def token_candidates(text: str) -> Iterator[Candidate]:
    for token in TOKEN_FORMATS:
        if token.marker not in text:
            continue
        for match in token.pattern.finditer(text):
            value = match.group(0)
            if token.check is not None and not token.check(value):
                continue
            if not _plausible(value) and (token.proof is None or not token.proof(value)):
                continue
            yield Candidate(
                start=match.start(), end=match.end(), priority=SPECIFIC, kind=token.kind
            )


# --- blocks: private keys, PuTTY keys, JWTs -----------------------------------------------------

_KEY_LABEL = r"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_KEY_BEGIN = re.compile(r"-----BEGIN " + _KEY_LABEL)
_KEY_END = re.compile(r"-----END " + _KEY_LABEL)


def private_key_candidates(text: str) -> Iterator[Candidate]:
    """Whole ``-----BEGIN ... PRIVATE KEY-----`` blocks; without an END, to the end of text."""
    if "PRIVATE KEY" not in text:
        return
    position = 0
    while (begin := _KEY_BEGIN.search(text, position)) is not None:
        end = _KEY_END.search(text, begin.end())
        stop = len(text) if end is None else end.end()
        yield Candidate(
            start=begin.start(), end=stop, priority=PRIORITY[PRIVATE_KEY], kind=PRIVATE_KEY
        )
        position = stop


_PUTTY_BEGIN = re.compile(r"PuTTY-User-Key-File-\d: ")
_PUTTY_END = re.compile(r"Private-MAC: [0-9a-fA-F]{0,128}")


def putty_key_candidates(text: str) -> Iterator[Candidate]:
    """A PuTTY ``.ppk`` file from its first line to its ``Private-MAC`` (or the end of text)."""
    if "PuTTY-User-Key-File-" not in text:
        return
    position = 0
    while (begin := _PUTTY_BEGIN.search(text, position)) is not None:
        end = _PUTTY_END.search(text, begin.end())
        stop = len(text) if end is None else end.end()
        yield Candidate(
            start=begin.start(), end=stop, priority=PRIORITY[PRIVATE_KEY], kind=PRIVATE_KEY
        )
        position = stop


_JWT = re.compile(
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"
    r"(?:\.[A-Za-z0-9_-]+)*"
)


def jwt_candidates(text: str) -> Iterator[Candidate]:
    if "eyJ" not in text:
        return
    for match in _JWT.finditer(text):
        yield Candidate(start=match.start(), end=match.end(), priority=PRIORITY[JWT], kind=JWT)
