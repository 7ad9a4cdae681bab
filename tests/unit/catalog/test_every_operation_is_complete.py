"""Every route key has each of the four pieces docs/adding-an-operation.md lists: its key with a spec (probe
parameters, a relay input rule its bodies pass) and the contract of its lookup endpoint beside it in the same
retailer module (or a stated reason it has none), a simulated upstream with soft failures, and a test fixture."""

from __future__ import annotations

import ast
import inspect
import json
import sys
from urllib.parse import urlsplit

import pytest

from functions.catalog import CATALOG, LOOKUPS
from functions.catalog.contract import LookupQuery
from functions.core import Reason, RouteFailure, RouteKey, group_of
from relay.inputs import read_relay_input
from sandbox.simulator.payloads import SIMULATED, probe_request, realistic_payload, soft_failure_payloads
from sandbox.simulator.routes import relay_route, retailer_route
from tests.support.catalog_fixtures import VALID

NOW = 1_748_822_400_000  # 2025-06-02 09:00 KST

WITHOUT_AN_ENDPOINT: dict[RouteKey, str] = {}
"""A route key no lookup endpoint uses, with the reason why (none today)."""


def route_keys_named_in(source: str) -> set[RouteKey]:
    return {
        RouteKey[node.attr]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "RouteKey"
    }


def keys_of(query: type[LookupQuery]) -> set[RouteKey]:
    """The route keys one lookup endpoint uses: named in its query model (and the models it extends), or
    its members' for a lookup made of other lookups (the comparison)."""
    if query.members:
        return {key for member in query.members for key in keys_of(member)}
    return {
        key
        for klass in query.__mro__
        if issubclass(klass, LookupQuery) and klass is not LookupQuery
        for key in route_keys_named_in(inspect.getsource(klass))
    }


def endpoint_keys() -> set[RouteKey]:
    """The route keys the lookup API's endpoints use."""
    return {key for query in LOOKUPS for key in keys_of(query)}


@pytest.mark.parametrize("key", list(RouteKey))
def test_the_spec_and_its_probe_request(key: RouteKey) -> None:
    spec = CATALOG[key]
    params = spec.probe_params(NOW)
    assert (spec.key, type(params)) == (key, spec.params)
    url = urlsplit(spec.build_request(params).url)
    assert url.scheme == "https"
    assert not urlsplit(spec.url).query  # the query comes from `spec.query`


@pytest.mark.parametrize("key", list(RouteKey))
def test_the_relay_rule_accepts_the_probes_relay_body(key: RouteKey) -> None:
    spec = CATALOG[key]
    body = dict(spec.relay_body(spec.probe_params(NOW)))
    assert read_relay_input(key, json.dumps(body).encode()) == body


@pytest.mark.parametrize("key", list(RouteKey))
def test_the_simulated_upstream_answers_and_fails_softly(key: RouteKey) -> None:
    spec = CATALOG[key]
    assert key in SIMULATED
    assert spec.normalize(spec.validate(realistic_payload(key, probe_request(key, NOW))))
    failures = soft_failure_payloads(key)
    assert failures
    for body in failures.values():
        with pytest.raises(RouteFailure) as rejected:
            spec.validate(body)
        assert rejected.value.reason is Reason.SHAPE


@pytest.mark.parametrize("key", list(RouteKey))
def test_the_simulator_routes_the_specs_url_and_relay_operation_to_the_key(key: RouteKey) -> None:
    spec = CATALOG[key]
    url = urlsplit(spec.url)
    assert retailer_route(url.netloc, url.path) is key  # no two specs share a URL
    assert relay_route(group_of(key), spec.relay_operation) is key  # nor a relay operation


@pytest.mark.parametrize("key", list(RouteKey))
def test_the_test_fixture_has_a_valid_upstream_body(key: RouteKey) -> None:
    spec = CATALOG[key]
    assert spec.normalize(spec.validate(VALID[key]))


@pytest.mark.parametrize("query", LOOKUPS, ids=lambda query: query.name)
def test_each_lookups_contract_is_beside_the_specs_of_its_operations(query: type[LookupQuery]) -> None:
    assert keys_of(query)
    if query.members:  # made of other lookups, each beside its own specs (and no step of its own)
        assert set(query.members) <= set(LOOKUPS)
        assert not route_keys_named_in(inspect.getsource(query))
        return
    module = sys.modules[query.__module__]
    assert all(CATALOG[key] in vars(module)["SPECS"] for key in keys_of(query))


@pytest.mark.parametrize(
    "member", [member for query in LOOKUPS for member in query.members], ids=lambda member: member.name
)
def test_a_member_of_another_lookup_prepares_its_steps_before_any_call(member: type[LookupQuery]) -> None:
    # LookupQuery's own `prepare` leaves the validation to `fetch`: too late for a lookup whose members call
    # at once (docs/adding-an-operation.md).
    assert member.prepare is not LookupQuery.prepare


def test_every_route_key_has_an_api_endpoint_or_a_reason_why_not() -> None:
    assert endpoint_keys() | set(WITHOUT_AN_ENDPOINT) == set(RouteKey)
    assert not endpoint_keys() & set(WITHOUT_AN_ENDPOINT)


def test_every_endpoint_is_a_rest_route_an_mcp_tool_and_a_lookup_command() -> None:
    # The tools and the commands are read from the OpenAPI document of the registered REST endpoints: an
    # endpoint needs nothing more for them (tests/unit/mcp/test_lookup_document.py adds one to the document).
    from functions.handlers import api
    from functions.lookup_document import lookup_document, lookup_operations
    from functions.mcp.tools import LookupTools
    from ops_cli.lookup import parser

    operations = lookup_operations(lookup_document())
    registered = [api.operation_id(query) for query in LOOKUPS]
    tools = LookupTools(operations, api.lambda_handler).definitions
    command = parser(operations)

    assert [tool["name"] for tool in tools] == registered
    for operation in operations:
        required = [f"--{p.name}=x" for p in operation.parameters if p.required]
        assert command.parse_args([operation.name, *required]).operation == operation.name
