"""Every configured value of a `Secrets`, in clear text: what a leak check looks for in output."""

from __future__ import annotations

from pydantic import SecretStr

from functions.adapters.secrets import Secrets


def secret_values(secrets: Secrets) -> list[str]:
    values = (getattr(secrets, name) for name in Secrets.model_fields)
    return [value.get_secret_value() for value in values if isinstance(value, SecretStr)]
