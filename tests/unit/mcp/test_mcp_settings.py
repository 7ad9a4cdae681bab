"""The MCP function's one setting of its own: the names it answers to (`MCP_ALLOWED_HOSTS`)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from functions.handlers.settings import LOOPBACK_HOSTS, McpSettings

POWERTOOLS = {"POWERTOOLS_SERVICE_NAME": "route-health", "POWERTOOLS_METRICS_NAMESPACE": "RouteHealth"}


def allowed(value: str | None) -> tuple[str, ...]:
    overrides = POWERTOOLS if value is None else {**POWERTOOLS, "MCP_ALLOWED_HOSTS": value}
    return McpSettings.model_validate(overrides).mcp_allowed_hosts


def test_unset_or_blank_is_loopback_with_any_port() -> None:
    assert allowed(None) == allowed(" ") == LOOPBACK_HOSTS == ("localhost:*", "127.0.0.1:*", "[::1]:*")


def test_the_list_is_comma_separated_lowercase_and_skips_empty_parts() -> None:
    # The stack joins the API's domain and the optional extra names: an empty extra leaves a trailing comma.
    assert allowed("Abc.Execute-Api.ap-northeast-2.amazonaws.com,") == (
        "abc.execute-api.ap-northeast-2.amazonaws.com",
    )
    assert allowed(" a.example , b.example:8443,c.example:*,[::1]:*") == (
        "a.example",
        "b.example:8443",
        "c.example:*",
        "[::1]:*",
    )


@pytest.mark.parametrize("value", ["https://a.example", "a.example/mcp", "*.example", "a.example:x", ","])
def test_anything_but_names_fails_naming_the_variable(value: str) -> None:
    with pytest.raises(ValidationError, match="MCP_ALLOWED_HOSTS"):
        allowed(value)
