"""Schemathesis, the schema-driven API fuzzer, against a sandbox of its own over real HTTP, from the OpenAPI
document the sandbox serves: every lookup endpoint and the operator API (with the operator secret).

It fails on any 5xx, on any answer the document does not describe (status, content type, body schema,
headers), on an operator endpoint that serves a request without the secret, and on any refusal of a request
the document calls valid. A rule across parameters, which no parameter's schema can carry, is excepted by
name: a request that breaks one must be refused with a 400 that states it, and only then.

Deterministic (a fixed seed, derandomized, no example database) and bounded (`MAX_EXAMPLES` generated
requests per operation, besides the coverage phase's boundary values); offline, on 127.0.0.1.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import schemathesis
from schemathesis import checks

from functions.catalog import LOOKUPS
from functions.catalog.gs25 import ITEM_CODE_OR_KEYWORD
from functions.catalog.seveneleven import MAX_START_COUNT, SEARCH_WINDOW
from functions.core.input_rules import CrossRule
from functions.core.model import PINNED_TO_RELAY, OverrideMode
from functions.core.overrides import PINNED_NEVER_DIRECT
from functions.handlers.api import operation_id
from tests.e2e.conftest import Sandbox, running_sandbox
from tests.support.openapi import served_document

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("fuzzed_sandbox")]

SEED = 22
MAX_EXAMPLES = 20

Case = schemathesis.Case[Any]


def _number(case: Case, name: str, default: int) -> int:
    return int(float((case.query or {}).get(name, default)))


def _forces_a_pinned_key_direct(case: Case) -> bool:
    body = case.body if isinstance(case.body, dict) else {}
    key = (case.path_parameters or {}).get("key")
    return key in PINNED_TO_RELAY and body.get("mode") == OverrideMode.FORCE_DIRECT.value


BREAKS: dict[str, Callable[[Case], bool]] = {
    ITEM_CODE_OR_KEYWORD.name: lambda case: not {"itemCode", "keyword"} & set(case.query or {}),
    SEARCH_WINDOW.name: lambda case: (
        (_number(case, "page", 1) - 1) * _number(case, "size", 20) > MAX_START_COUNT
    ),
    PINNED_NEVER_DIRECT.name: _forces_a_pinned_key_direct,
}
"""Whether a request breaks the rule across parameters of this name (the tests' own reading of each)."""

CROSS_PARAMETER_RULES: dict[str, tuple[CrossRule, ...]] = {
    **{operation_id(query): query.cross_rules for query in LOOKUPS},
    "setRouteOverride": (PINNED_NEVER_DIRECT,),
}
"""Each operation's rules across parameters, by operationId, as the code declares them."""

ANSWERS_ABOUT_THE_WORLD = {404: {"UPSTREAM_NOT_FOUND", "NO_OVERRIDE"}}
"""4xx answers to valid requests that say something about the data, not about the request (besides 429)."""


def valid_requests_are_served(ctx: schemathesis.CheckContext, response: Any, case: Case) -> None:
    """A request the document calls valid is never refused, unless it breaks a rule across parameters; one
    that breaks such a rule is always refused, with a 400 that states the rule."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return  # a request the document calls invalid (or a method it does not list)
    rules = CROSS_PARAMETER_RULES.get(case.operation.definition.raw["operationId"], ())
    broken = [rule for rule in rules if BREAKS[rule.name](case)]
    if broken:
        assert response.status_code == 400, f"breaks {[rule.name for rule in broken]}: {response.text}"
        for rule in broken:
            assert rule.text in response.text, f"the 400 does not state {rule.name}: {response.text}"
        return
    if not 400 <= response.status_code < 500 or response.status_code == 429:
        return
    code = response.json().get("error", {}).get("code") if response.text else None
    assert code in ANSWERS_ABOUT_THE_WORLD.get(response.status_code, ()), (
        f"a request the document calls valid was refused: {response.status_code} {response.text}"
    )


CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
    checks.ignored_auth,
    checks.negative_data_rejection,
    valid_requests_are_served,
]
"""Not run: `unsupported_method`, which wants 405 where API Gateway (and the sandbox) answers any method it has
no route for with 404 `{"message": "Not Found"}`, as the document says; and the stateful and negative checks
(requests the document calls invalid are tests/unit/handlers/test_document_agrees.py's)."""


SECRET = secrets.token_urlsafe(24)
"""The fuzzed sandbox's operator secret (the fuzzer's configuration is made before the sandbox starts)."""

schema = schemathesis.openapi.from_dict(
    served_document(),
    config=schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {
                "mode": "all",
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "database": "none",
            },
            "phases": {"examples": {"enabled": False}, "stateful": {"enabled": False}},
            "auth": {"openapi": {"bearer": {"bearer": SECRET}}},
        }
    ),
)


@pytest.fixture(scope="module")
def fuzzed_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """A sandbox of its own: the overrides and probes the fuzzer makes touch no other test's sandbox."""
    with running_sandbox(tmp_path_factory.mktemp("fuzzed-sandbox"), secret=SECRET) as started:
        yield started
        started.assert_nothing_leaked()


def test_the_fuzzed_document_is_the_one_the_sandbox_serves(fuzzed_sandbox: Sandbox) -> None:
    assert fuzzed_sandbox.http.get("/api/openapi.json").json() == served_document()


@schema.parametrize()
def test_the_served_document_says_what_the_server_does(case: Case, fuzzed_sandbox: Sandbox) -> None:
    case.call_and_validate(base_url=fuzzed_sandbox.url, checks=CHECKS)
