"""Provider keys from Secrets Manager (moto), as the functions read them at cold start."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from memvault.adapters.aws.secrets import resolve_provider_keys
from memvault.settings import Settings
from tests.support.aws import REGION, serial_moto


class _Unused:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"Secrets Manager was called ({name}) with no secret named")


def test_keys_are_read_from_their_secrets() -> None:
    with serial_moto():
        sm = boto3.client("secretsmanager", region_name=REGION)
        arn = sm.create_secret(Name="stack/openai-api-key", SecretString=" sk-openai-123\n")["ARN"]
        sm.create_secret(Name="stack/anthropic-api-key", SecretString="sk-ant-456")
        settings = Settings(
            aws_region=REGION,
            openai_api_key_secret=arn,
            anthropic_api_key_secret="stack/anthropic-api-key",
        )
        resolved = resolve_provider_keys(settings)
    assert resolved.openai_api_key is not None
    assert resolved.openai_api_key.get_secret_value() == "sk-openai-123"
    assert resolved.anthropic_api_key is not None
    assert resolved.anthropic_api_key.get_secret_value() == "sk-ant-456"
    assert settings.openai_api_key is None  # the original is left as it was


def test_an_empty_secret_leaves_the_provider_unconfigured() -> None:
    with serial_moto():
        sm = boto3.client("secretsmanager", region_name=REGION)
        sm.create_secret(Name="stack/openai-api-key")  # as the stack creates it
        settings = Settings(
            aws_region=REGION, openai_api_key_secret="stack/openai-api-key", openai_api_key=None
        )
        resolved = resolve_provider_keys(settings, client=sm)
    assert resolved.openai_api_key is None


def test_a_missing_secret_fails_loudly() -> None:
    with serial_moto():
        settings = Settings(aws_region=REGION, anthropic_api_key_secret="stack/nope")
        with pytest.raises(ClientError) as caught:
            resolve_provider_keys(settings)
    assert caught.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_no_secret_named_makes_no_call() -> None:
    settings = Settings(openai_api_key="sk-local")  # type: ignore[arg-type]
    assert resolve_provider_keys(settings, client=_Unused()) is settings
