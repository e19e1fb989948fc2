"""Provider API keys from AWS Secrets Manager: read when a Lambda function starts, and
read again while it runs, so a rotated key applies without a cold start.

The deployed stack keeps the OpenAI and Anthropic keys in Secrets Manager rather than in
environment variables (which show in the console and in every `GetFunctionConfiguration`).
A function's entrypoint calls ``resolve_provider_keys`` at cold start (a misdeployed
stack fails loudly there); the keys then live in that process's ``Settings`` like
locally configured ones. The inference function also hands the gateway a
``ProviderKeys``: each request asks it for the key, which Powertools' parameters utility
(``get_secret``) keeps for ``secrets_max_age_seconds`` (300 by default) before reading it
again. Nothing else in the package imports this module, so the embedded install never
touches Secrets Manager.
"""

from __future__ import annotations

import logging
from typing import Any

from botocore.exceptions import ClientError
from pydantic import SecretStr

from memvault.adapters.aws.clients import error_code, make_client
from memvault.settings import Settings

log = logging.getLogger("memvault.aws.secrets")

# (secret setting, key setting it fills)
_PROVIDER_SECRETS = (
    ("openai_api_key_secret", "openai_api_key"),
    ("anthropic_api_key_secret", "anthropic_api_key"),
)


def resolve_provider_keys(settings: Settings, client: Any | None = None) -> Settings:
    """``settings`` with each provider key read from its named secret, where one is named.

    A secret that exists but holds no value yet (the stack creates them empty; the deployer
    puts the key in) leaves that provider unconfigured with a warning: requests to it fail
    with the gateway's own "no upstream key" error rather than the whole function failing.
    Any other failure (no such secret, access denied) raises: a misdeployed stack should
    fail loudly at cold start.
    """
    named = [(s, k) for s, k in _PROVIDER_SECRETS if getattr(settings, s)]
    if not named:
        return settings
    sm = client or make_client("secretsmanager", settings.aws_region)
    updates: dict[str, SecretStr] = {}
    for secret_field, key_field in named:
        secret_id: str = getattr(settings, secret_field)
        value = _read(sm, secret_id)
        if value:
            updates[key_field] = SecretStr(value)
        else:
            log.warning("provider secret has no value yet", extra={"secret": secret_id})
    return settings.model_copy(update=updates) if updates else settings


def _read(client: Any, secret_id: str) -> str | None:
    try:
        out = client.get_secret_value(SecretId=secret_id)
    except ClientError as exc:
        # An empty secret (created without a value) has no AWSCURRENT version; Secrets
        # Manager answers ResourceNotFoundException for the version, as for no secret at all.
        if error_code(exc) == "ResourceNotFoundException" and _exists(client, secret_id):
            return None
        raise
    value = str(out.get("SecretString") or "").strip()
    return value or None


def _exists(client: Any, secret_id: str) -> bool:
    try:
        client.describe_secret(SecretId=secret_id)
    except ClientError as exc:
        if error_code(exc) == "ResourceNotFoundException":
            return False
        raise
    return True


class ProviderKeys:
    """Each provider's key as Secrets Manager holds it now, read through Powertools
    parameters with a max age (one read per key per ``max_age`` seconds): its own
    ``SecretsProvider`` (what ``parameters.get_secret`` calls), made on first use, so its
    client follows this process's configuration rather than whichever made the global one.
    A read that fails (throttled, an emptied secret) keeps the last key it had, with a
    warning: a rotation never takes a working gateway down."""

    def __init__(self, settings: Settings) -> None:
        self.max_age = settings.secrets_max_age_seconds
        self.region = settings.aws_region
        self._provider: Any = None
        self.secrets: dict[str, str] = {}
        self.last: dict[str, str] = {}
        for secret_field, key_field in _PROVIDER_SECRETS:
            provider = key_field.removesuffix("_api_key")
            secret_id = getattr(settings, secret_field)
            if secret_id:
                self.secrets[provider] = secret_id
            key = getattr(settings, key_field)
            if key is not None:
                self.last[provider] = key.get_secret_value()

    def __call__(self, provider: str) -> str | None:
        secret_id = self.secrets.get(provider)
        if secret_id is None:
            return self.last.get(provider)
        from aws_lambda_powertools.utilities.parameters import SecretsProvider
        from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

        if self._provider is None:
            self._provider = SecretsProvider(
                boto3_client=make_client("secretsmanager", self.region)
            )
        try:
            value = self._provider.get(secret_id, max_age=self.max_age)
        except GetParameterError:
            log.warning("provider secret could not be read", extra={"secret": secret_id})
            return self.last.get(provider)
        text = (value.decode() if isinstance(value, bytes) else str(value or "")).strip()
        if text:
            self.last[provider] = text
        return text or self.last.get(provider)
