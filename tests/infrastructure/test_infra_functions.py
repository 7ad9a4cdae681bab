"""Functions, packaging, schedule and secret (docs/design.md, "Infrastructure and observability")."""

from __future__ import annotations

import importlib

import pytest

from functions.handlers.settings import ApiSettings, CommonSettings, McpSettings, OpsSettings, ProbeSettings
from infra.api import API_HANDLER, MCP_HANDLER, OPS_HANDLER
from infra.environment import RUNTIME_ENVIRONMENT
from infra.probe import PROBE_HANDLER

pytestmark = pytest.mark.infra

SETTINGS_BY_HANDLER: dict[str, type[CommonSettings]] = {
    PROBE_HANDLER: ProbeSettings,
    API_HANDLER: ApiSettings,
    OPS_HANDLER: OpsSettings,
    MCP_HANDLER: McpSettings,  # the lookup function's (it runs its handler in process), and its own
}


def _resolve(handler: str) -> object:
    module_name, _, attribute = handler.rpartition(".")
    return getattr(importlib.import_module(module_name), attribute)


def test_exactly_the_four_handlers_are_deployed(synthesized):
    assert set(synthesized.functions_by_handler()) == set(SETTINGS_BY_HANDLER)


@pytest.mark.parametrize("handler", sorted(SETTINGS_BY_HANDLER))
def test_handler_string_resolves_to_a_real_function(handler):
    assert callable(_resolve(handler))


def test_code_asset_keeps_the_functions_package_root():
    from infra.packaging import stage_code

    staged = stage_code(compile_bytecode=False)
    assert (staged / "functions" / "handlers" / "__init__.py").is_file()
    assert sorted(p.name for p in staged.iterdir()) == ["functions"]
    assert not list(staged.rglob("__pycache__"))  # the working tree's own caches are never shipped


def test_code_asset_ships_bytecode_for_the_runtime_python_when_one_is_installed():
    from infra.packaging import _runtime_python, stage_code

    if _runtime_python() is None:
        pytest.skip("no Python 3.12 on this machine: the asset ships sources only")
    staged = stage_code()
    compiled = {path.name for path in staged.rglob("*.pyc")}
    assert "api.cpython-312.pyc" in compiled
    assert all(name.endswith(".cpython-312.pyc") for name in compiled)


def test_publishing_a_build_drops_only_older_builds_of_the_same_variant(tmp_path, monkeypatch):
    from infra import packaging

    monkeypatch.setattr(packaging, "BUILD_DIR", tmp_path)
    old, new = "0" * 16, "1" * 16
    kept = [
        f"code-{old}",  # `make synth`'s bytecode build: the tests' source-only build must not delete it
        "code-tmpab12cd34",  # another build still in progress
        f"layer-arm64-py312-{old}-pyc",
        f"layer-arm64-py312-{old}",
        "code-notes",  # not a build
    ]
    for name in [*kept, f"code-{old}-src"]:
        (tmp_path / name).mkdir()
    build = tmp_path / "code-tmp-new"
    (build / "functions").mkdir(parents=True)

    published = packaging._publish(build, tmp_path / f"code-{new}-src", new)

    assert published == tmp_path / f"code-{new}-src"
    assert (published / "functions").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, f"code-{new}-src"])

    newer_layer = tmp_path / "layer-tmp-new"
    newer_layer.mkdir()
    packaging._publish(newer_layer, tmp_path / f"layer-arm64-py312-{new}-pyc", new)
    assert not (tmp_path / f"layer-arm64-py312-{old}-pyc").exists()
    assert (tmp_path / f"layer-arm64-py312-{old}").is_dir()  # the variant without bytecode stays


def test_a_build_that_lost_the_race_is_discarded(tmp_path, monkeypatch):
    from infra import packaging

    monkeypatch.setattr(packaging, "BUILD_DIR", tmp_path)
    digest = "2" * 16
    winner = tmp_path / f"code-{digest}"
    (winner / "functions").mkdir(parents=True)
    (winner / "functions" / "marker").write_text("first")
    loser = tmp_path / "code-tmp-late"
    (loser / "functions").mkdir(parents=True)

    assert packaging._publish(loser, winner, digest) == winner
    assert (winner / "functions" / "marker").read_text() == "first"
    assert not loser.exists()


@pytest.mark.parametrize("handler", sorted(SETTINGS_BY_HANDLER))
def test_environment_names_match_the_settings_aliases(synthesized, handler):
    _, props = synthesized.functions_by_handler()[handler]
    names = set(props["Environment"]["Variables"])
    settings_names = {field.alias for field in SETTINGS_BY_HANDLER[handler].model_fields.values()}

    libraries_only = {
        "POWERTOOLS_LOG_LEVEL",
        "POWERTOOLS_TRACER_CAPTURE_RESPONSE",
        "POWERTOOLS_TRACE_DISABLED",
        *RUNTIME_ENVIRONMENT,
    }
    assert names <= settings_names | libraries_only
    assert {"ROUTE_HEALTH_TABLE", "ROUTE_HEALTH_SECRET_ID", "POWERTOOLS_SERVICE_NAME"} <= names
    assert {"POWERTOOLS_METRICS_NAMESPACE", "POWERTOOLS_LOG_LEVEL"} <= names


def test_environment_points_at_this_stacks_table_and_secret(synthesized):
    table_id, _ = synthesized.only("AWS::DynamoDB::Table")
    secret_id, _ = synthesized.only("AWS::SecretsManager::Secret")
    for _, props in synthesized.functions_by_handler().values():
        variables = props["Environment"]["Variables"]
        assert variables["ROUTE_HEALTH_TABLE"] == {"Ref": table_id}
        assert variables["ROUTE_HEALTH_SECRET_ID"] == {"Ref": secret_id}


def test_runtime_architecture_tracing_and_layers(synthesized):
    layers = {
        props["Properties"]["Description"].split(" (")[0]: logical_id
        for logical_id, props in synthesized.resources("AWS::Lambda::LayerVersion").items()
    }
    shared = layers.pop("Route Health runtime dependencies")
    (mcp_only,) = layers.values()  # the MCP function's own layer
    for handler, (_, props) in synthesized.deployed().functions_by_handler().items():
        assert props["Runtime"] == "python3.12"
        assert props["Architectures"] == ["arm64"]
        assert props["TracingConfig"] == {"Mode": "Active"}  # Tracing=xray, the default
        extra = [{"Ref": mcp_only}] if handler == MCP_HANDLER else []
        assert props["Layers"] == [{"Ref": shared}, *extra]


def test_the_mcp_layer_holds_only_what_the_runtime_layer_lacks():
    from infra.packaging import MCP_LOCK, RUNTIME_LOCK, locked_pins

    runtime, mcp = locked_pins(RUNTIME_LOCK.read_text()), locked_pins(MCP_LOCK.read_text())
    assert runtime < mcp  # compiled against the runtime lock: every shared pin is the same
    assert {pin.split("==")[0] for pin in mcp - runtime} == {"mcp-types"}


def test_each_function_logs_to_its_own_group_with_retention(synthesized):
    log_groups = synthesized.resources("AWS::Logs::LogGroup")
    targets = set()
    for _, props in synthesized.functions_by_handler().values():
        group_id = props["LoggingConfig"]["LogGroup"]["Ref"]
        assert log_groups[group_id]["Properties"]["RetentionInDays"] == 30
        targets.add(group_id)
    assert len(targets) == 4


def test_timeouts(synthesized):
    functions = synthesized.functions_by_handler()
    assert functions[PROBE_HANDLER][1]["Timeout"] == 60
    # Inside the HTTP API's 30 s integration limit; the lookup's leaves room for INIT beyond the largest
    # lookup budget the LookupBudgetSeconds parameter allows. A tool call is one lookup, with the same budget.
    assert functions[API_HANDLER][1]["Timeout"] == 29
    assert functions[MCP_HANDLER][1]["Timeout"] == 29
    assert synthesized.template["Parameters"]["LookupBudgetSeconds"]["MaxValue"] <= 29 - 4
    assert functions[OPS_HANDLER][1]["Timeout"] < 30


def test_probe_runs_every_five_minute_slot_one_at_a_time(synthesized):
    probe_id, probe = synthesized.deployed().functions_by_handler()[PROBE_HANDLER]
    _, rule = synthesized.only("AWS::Events::Rule")

    assert rule["Properties"]["ScheduleExpression"] == "cron(0/5 * * * ? *)"
    assert rule["Properties"]["State"] == "ENABLED"
    [target] = rule["Properties"]["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [probe_id, "Arn"]}
    assert probe["ReservedConcurrentExecutions"] == "1"  # CloudFormation makes the text an integer

    _, invoke_config = synthesized.only("AWS::Lambda::EventInvokeConfig")
    assert invoke_config["Properties"]["FunctionName"] == {"Ref": probe_id}
    assert invoke_config["Properties"]["MaximumRetryAttempts"] == 0


def test_secret_is_generated_json_with_the_health_check_key(synthesized):
    _, secret = synthesized.only("AWS::SecretsManager::Secret")
    generate = secret["Properties"]["GenerateSecretString"]

    assert generate["GenerateStringKey"] == "HEALTH_CHECK_SECRET"
    assert generate["SecretStringTemplate"] == "{}"
    assert "SecretString" not in secret["Properties"]  # no value in the template
