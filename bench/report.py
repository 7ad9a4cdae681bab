"""The human-readable side of the results: the stdout table and bench/results/latest.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.cases.cost import SCENARIOS
from functions.core.model import DIRECT_PROBED, DIRECT_TIMEOUT_MS, SECOND_MS, RelayGroup
from functions.services.probe_run import MAX_IN_FLIGHT

COMPONENTS = (
    "lambda_requests",
    "lambda_compute",
    "api_gateway",
    "dynamodb_writes",
    "dynamodb_reads",
    "dynamodb_storage",
    "cloudwatch_metrics",
    "cloudwatch_alarms",
    "cloudwatch_dashboard",
    "cloudwatch_logs",
    "secrets_manager",
    "kms",
    "xray",
    "cloudfront",
)

NOTES = Path(__file__).resolve().parent / "profile_notes.md"
PROBE_CHECKS = len(DIRECT_PROBED) + len(RelayGroup)
PROBE_WORST_CASE_S = -(-PROBE_CHECKS // MAX_IN_FLIGHT) * DIRECT_TIMEOUT_MS // SECOND_MS
"""Every check hanging to its deadline, `MAX_IN_FLIGHT` at a time: 7 rounds of 3 s."""


Row = tuple[str, str, str]
"""(measure, value, how)"""


def _rows(results: dict[str, Any]) -> list[Row]:
    return [
        *_handler_rows(results),
        *_cold_start_rows(results),
        *_probe_and_load_rows(results),
        *_cost_and_quota_rows(results),
        *_relay_rows(results["relay"]),
        *_mcp_rows(results["mcp"]),
        *_cache_rows(results["cache"]),
        *_compare_rows(results["compare"]),
    ]


def _handler_rows(results: dict[str, Any]) -> list[Row]:
    handler = results["handler_detail"]
    return [
        ("decision_ns_median", f"{results['decision_ns_median']:.0f} ns", "pure route decision, warm"),
        (
            "handler_overhead_us_median",
            f"{results['handler_overhead_us_median']:.0f} µs",
            f"median of per-batch (API handler − bare fetch); medians {handler['handler_us_median']:.0f} / "
            f"{handler['bare_fetch_us_median']:.0f} µs",
        ),
        (
            "handler_overhead_ratio_vs_bare_resolver",
            f"{results['handler_overhead_ratio_vs_bare_resolver']:.2f}×",
            f"that overhead / what a bare Powertools route with the same query validation adds to the same "
            f"call ({handler['bare_route_with_fetch_overhead_us_median']:.0f} µs); in CPU time "
            f"{handler['cpu']['overhead_ratio_vs_bare_resolver']:.2f}×. Over the bare route alone, making no "
            f"call ({handler['bare_resolver_us_median']:.0f} µs answering a constant, "
            f"{handler['bare_resolver_realistic_payload_us_median']:.0f} µs answering the lookup's "
            f"{handler['response_bytes']:,} bytes): {handler['ratio_vs_bare_route_without_the_call']:.2f}×, "
            f"where the bare route making the call reads {handler['floor_ratio_vs_bare_resolver']:.2f}×",
        ),
        (
            "store_calls_on_request_path",
            str(results["store_calls_on_request_path"]),
            "DynamoDB calls over 1,000 warm lookups",
        ),
    ]


def _cold_start_rows(results: dict[str, Any]) -> list[Row]:
    cold = results["cold_import_ms_median"]
    return [
        (
            "cold_import_ms_median",
            f"api {cold['api']:.0f} / probe {cold['probe']:.0f} / ops {cold['ops']:.0f} ms",
            "fresh processes, import statement only",
        ),
        ("boto3_import_ms_median", f"{results['boto3_import_ms_median']:.0f} ms", "same run, same way"),
        (
            "cold_import_ratio_vs_boto3",
            f"{results['cold_import_ratio_vs_boto3']:.2f}×",
            "max(api, probe, ops) / boto3: "
            + ", ".join(
                f"{k} {v:.2f}" for k, v in results["cold_import_detail"]["ratio_per_function"].items()
            ),
        ),
        (
            "cold_import_cpu_ratio_vs_boto3",
            f"{results['cold_import_cpu_ratio_vs_boto3']:.2f}×",
            "the same in CPU time: "
            + ", ".join(
                f"{k} {v:.2f}" for k, v in results["cold_import_detail"]["cpu_ratio_per_function"].items()
            ),
        ),
        (
            "cold_init_ratio",
            f"{results['cold_init_ratio']:.2f}×",
            "max over functions of (import + container build, secret read, snapshot prefetch) / (import boto3 + "
            f"one DynamoDB client, {results['baseline_init_ms_median']:.0f} ms): "
            + ", ".join(
                f"{k} {results['cold_init_ms_median'][k]:.0f} ms ({v:.2f})"
                for k, v in results["cold_init_detail"]["ratio_per_function"].items()
            ),
        ),
        (
            "cold_init_cpu_ratio",
            f"{results['cold_init_cpu_ratio']:.2f}×",
            "the same in CPU time: "
            + ", ".join(
                f"{k} {v:.2f}" for k, v in results["cold_init_detail"]["cpu_ratio_per_function"].items()
            ),
        ),
    ]


def _probe_and_load_rows(results: dict[str, Any]) -> list[Row]:
    probe, load = results["probe_run_ms"], results["sandbox_load"]
    return [
        ("probe_run_ms.all_healthy", f"{probe['all_healthy']} ms", f"{PROBE_CHECKS} checks, 4 in flight"),
        (
            "probe_run_ms.all_hanging",
            f"{probe['all_hanging']} ms",
            "every upstream hangs past the 3 s deadline",
        ),
        (
            "probe_max_in_flight",
            str(results["probe_max_in_flight"]),
            "peak concurrent requests seen by the simulator",
        ),
        (
            "sandbox_load",
            f"{load['requests']} req, {load['errors']} errors, p50 {load['p50_ms']:.1f} ms, p99 {load['p99_ms']:.1f} ms",
            f"concurrency {load['detail']['concurrency']}, {load['detail']['throughput_rps']} req/s",
        ),
        (
            "sandbox_load.direct_share",
            f"{load['direct_share']:.1%}",
            "lookups served direct while direct was healthy",
        ),
        (
            "sandbox_load.fault_flip_errors",
            str(load["fault_flip_errors"]),
            f"{load['detail']['faulted_route']} → 403, then recovered",
        ),
    ]


def _cost_and_quota_rows(results: dict[str, Any]) -> list[Row]:
    series = results["metric_series"]
    cost, bill = results["cost_per_day"], results["cost_per_month"]
    prices = cost["assumed_prices_usd_per_million"]
    quota = results["quota"]
    hammering, throttled = quota["detail"]["hammering"], quota["detail"]["at_stage_throttle"]
    request_path = quota["detail"]["request_path"]
    return [
        (
            "cost_per_day",
            f"{cost['write_request_units']:,} WRU + {cost['read_request_units']:,.0f} RRU = ${cost['usd']:.4f}",
            f"{cost['breakdown']['warm_containers']} warm containers; ASSUMED {prices['region']} prices "
            f"${prices['write_request_unit']}/M WRU, ${prices['read_request_unit']}/M RRU",
        ),
        (
            "quota.overshoot_requests",
            f"{quota['overshoot_requests']} past {hammering['limit']:,}",
            f"{hammering['containers']} containers, one client at {hammering['rate_rps']:.0f} req/s (stated bound "
            f"{hammering['stated_bound']}); at the stage throttle, {throttled['rate_rps']:.0f} req/s: "
            f"{throttled['overshoot_requests']} (bound {throttled['stated_bound']})",
        ),
        (
            "quota.overhead_ratio_on_vs_off",
            f"{quota['overhead_ratio_on_vs_off']:.2f}×",
            f"handler overhead in the request thread's CPU time, daily quota on / off: "
            f"{request_path['handler_overhead_us_on']:.0f} / {request_path['handler_overhead_us_off']:.0f} µs "
            f"(off / off again, the noise floor: {request_path['noise_ratio_off_vs_off']:.2f}×; the check alone: "
            f"{request_path['quota_check_us_median']:.0f} µs; in wall time, with the flush to moto in process: "
            f"{request_path['wall']['overhead_ratio_on_vs_off']:.2f}×); {quota['store_calls_on_request_path']} "
            f"store calls on the request path over {request_path['lookups']:,} lookups",
        ),
        (
            "metric_series",
            f"{series['emitted']} emitted, {series['worst_case']} worst case",
            f"distinct series in the load run's EMF lines (probe alone: {series['emitted_without_lookups']}); "
            f"worst case: the metric table's (every function included), budget {series['budget']}",
        ),
        *(
            (
                f"cost_per_month.{name}",
                f"${bill[name]['total_usd']:,.2f}",
                f"{bill[name]['lookups']:,} lookups/month; largest: {_largest(bill[name])}; ASSUMED prices",
            )
            for name in SCENARIOS
        ),
    ]


def _relay_rows(relay: dict[str, Any]) -> list[Row]:
    latency, at_limit = relay["detail"]["latency"], relay["detail"]["at_limit"]
    return [
        (
            "relay.added_ms_median / p99",
            f"{relay['added_ms_median']:.2f} / {relay['added_ms_p99']:.2f} ms",
            f"Lambda relay transport → route-health relay → retailer, minus the bare call "
            f"({latency['relay_ms_median']:.2f} vs {latency['bare_ms_median']:.2f} ms median, "
            f"{latency['calls_each']} calls each)",
        ),
        (
            "relay.unexpected_errors_at_limit",
            str(relay["unexpected_errors_at_limit"]),
            f"{at_limit['requests']} requests from {at_limit['callers']} callers at once, retailer "
            f"{at_limit['retailer_ms_per_call']} ms: {at_limit['answers']}; retailer peak in flight "
            f"{at_limit['retailer_peak_in_flight']} (slots {at_limit['upstream_slots']})",
        ),
    ]


def _mcp_rows(mcp: dict[str, Any]) -> list[Row]:
    imports, inits, calls = mcp["detail"]["cold_import"], mcp["detail"]["cold_init"], mcp["detail"]["call"]
    return [
        (
            "mcp.cold_import_ratio_vs_boto3",
            f"{mcp['cold_import_ratio_vs_boto3']:.2f}×",
            f"import of the MCP function (the lookup handler and the protocol types), {imports['ms_median']['mcp']:.0f} "
            f"ms / boto3 {imports['ms_median']['boto3']:.0f} ms; with the official SDK's server package instead: "
            f"{imports['sdk_ratio']:.2f}×",
        ),
        (
            "mcp.cold_init_ratio",
            f"{mcp['cold_init_ratio']:.2f}×",
            f"INIT with the lookup container and the tools built, {inits['ms_median']['mcp']:.0f} ms / baseline "
            f"{inits['ms_median']['baseline']:.0f} ms",
        ),
        (
            "mcp.call_ratio_vs_rest",
            f"{mcp['call_ratio_vs_rest']:.2f}×",
            "warm tools/call / the same lookup over REST, both handlers in process: "
            + ", ".join(f"{name} {us:.0f} µs" for name, us in calls["us_median"].items())
            + "; per revision "
            + ", ".join(f"{name} {ratio:.2f}×" for name, ratio in calls["ratio_per_revision"].items())
            + "; in CPU time "
            + ", ".join(f"{name} {ratio:.2f}×" for name, ratio in calls["cpu_ratio_per_revision"].items()),
        ),
    ]


def _cache_rows(cache: dict[str, Any]) -> list[Row]:
    hit, at_cap, stream = cache["detail"]["hit"], cache["detail"]["at_cap"], cache["stream"]
    cpu = hit["cpu_us_median"]
    return [
        (
            "cache.hit_overhead_ratio",
            f"{cache['hit_overhead_ratio']:.2f}×",
            f"a function-cache hit through the lookup handler ({cpu['hit']:.0f} µs CPU) / the handler's overhead "
            f"on a miss ({cpu['miss']:.0f} µs less the bare fetch's {cpu['bare_fetch']:.0f} µs); wall time "
            f"{hit['wall_us_median']['ratio']:.2f}×",
        ),
        (
            "cache.bytes_at_cap",
            f"{cache['bytes_at_cap']:,} B ({cache['bytes_at_cap_ratio']:.2%} of the cap)",
            f"after {at_cap['answers_filled']:,} distinct {at_cap['answer_bytes']:,}-byte answers, "
            f"{at_cap['entries']:,} kept; memory still allocated {cache['memory_growth_ratio']:.2f}× the cap "
            "(tracemalloc)",
        ),
        (
            "cache.stream",
            f"{stream['upstream_calls']:,} upstream calls for {stream['distinct_queries']:,} distinct queries",
            f"Zipf({stream['detail']['zipf_exponent']}) stream of {stream['lookups']:,} lookups over "
            f"{stream['detail']['query_universe']:,} queries of {len(stream['detail']['operations'])} lookups "
            f"through the sandbox's edge and functions in {stream['detail']['elapsed_s']} s: "
            f"{stream['edge_hits']:,} edge hits, {stream['function_hits']:,} function hits, "
            f"{stream['no_upstream_share']:.1%} of lookups reached no upstream; {stream['errors']} errors",
        ),
    ]


def _compare_rows(compare: dict[str, Any]) -> list[Row]:
    latency, cpu = compare["detail"]["latency"], compare["detail"]["cpu"]
    return [
        (
            "compare.latency_ratio_vs_slowest_member",
            f"{compare['latency_ratio_vs_slowest_member']:.2f}×",
            f"a compare of four retailers answering after "
            f"{', '.join(map(str, compare['detail']['delays_ms'].values()))} ms, {latency['compare_ms_median']:.0f} "
            f"ms / its slowest search alone {latency['slowest_member_ms_median']:.0f} ms (their sum: "
            f"{latency['sum_of_members_ms']} ms); target ≤ {compare['detail']['target_ratio']}",
        ),
        (
            "compare.cpu_overhead_us_over_slowest_member",
            f"{compare['cpu_overhead_us_over_slowest_member']} µs",
            f"process CPU of a compare with instant retailers, {cpu['compare_us_median']} µs, minus its slowest "
            f"member's lookup, {cpu['slowest_member_us_median']} µs (the other searches and the merge); over its "
            f"four searches one by one ({cpu['members_one_by_one_us_median']} µs): "
            f"{cpu['cpu_overhead_us_over_its_members_one_by_one']} µs",
        ),
    ]


def _largest(scenario: dict[str, Any], top: int = 3) -> str:
    components = sorted(((usd, name) for name, usd in scenario.items() if name in COMPONENTS), reverse=True)
    return ", ".join(f"{name} ${usd:,.2f}" for usd, name in components[:top])


def bill_table(results: dict[str, Any]) -> str:
    """The monthly bill per component and scenario, and the Route 53 alternative."""
    bill = results["cost_per_month"]
    lines = ["| component | " + " | ".join(SCENARIOS) + " |", "|---|" + "---:|" * len(SCENARIOS)]
    for component in COMPONENTS:
        lines.append(
            f"| {component} | " + " | ".join(f"${bill[s][component]:,.2f}" for s in SCENARIOS) + " |"
        )
    lines.append("| **total** | " + " | ".join(f"**${bill[s]['total_usd']:,.2f}**" for s in SCENARIOS) + " |")
    route53 = results["route53_alternative"]
    return "\n".join(
        [
            *lines,
            "",
            f"Idle with the dashboard, the alarm topic's key and X-Ray switched off: "
            f"${bill['idle_switched_off']['total_usd']:,.2f}. "
            f"At 10 M lookups with every metric series of the worst case ({results['metric_series']['worst_case']}): "
            f"${bill['10m_worst_case_series']['total_usd']:,.2f}. Route 53 health checks of the same "
            f"{route53['endpoints']} endpoints: ${route53['basic_usd']:,.2f} a month (basic), "
            f"${route53['https_and_string_match_usd']:,.2f} (HTTPS and a string match, closer to the probe) — "
            f"{route53['note']}.",
        ]
    )


def table(results: dict[str, Any]) -> str:
    lines = ["| measure | value | how |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {how} |" for name, value, how in _rows(results)]
    return "\n".join(lines)


def _meaning(results: dict[str, Any]) -> str:
    load = results["sandbox_load"]
    cost = results["cost_per_day"]
    bill = results["cost_per_month"]
    cold = results["cold_import_ms_median"]
    hammering = results["quota"]["detail"]["hammering"]
    throttled = results["quota"]["detail"]["at_stage_throttle"]
    request_path = results["quota"]["detail"]["request_path"]
    return "\n".join(
        [
            "## What this means for an operator",
            "",
            f"- **Routing costs nothing measurable.** The decision takes {results['decision_ns_median'] / 1000:.1f} µs and "
            f"makes {results['store_calls_on_request_path']} DynamoDB calls on a request's path: a slow or failing "
            "DynamoDB never slows a lookup; it only makes lookups go relay-first until the snapshot refreshes.",
            f"- **The handler adds ~{results['handler_overhead_us_median'] / 1000:.1f} ms per lookup** on top of the "
            "upstream call (routing, validation, normalization, logs and metrics). Retailers answer in tens to "
            "hundreds of ms, so the upstream dominates.",
            f"- **Cold starts** import about {max(cold.values()) / 1000:.1f} s of Python "
            f"({results['cold_import_ratio_vs_boto3']:.1f}× `import boto3`). See the profile notes below for where "
            "it goes and what would cut it.",
            f"- **The probe finishes in {results['probe_run_ms']['all_healthy']} ms when all is well and in "
            f"{results['probe_run_ms']['all_hanging'] / 1000:.0f} s when every upstream hangs** (against the local "
            f"simulator; real upstreams add their own latency, 4 at a time; {PROBE_CHECKS} checks × 3 s / 4 in flight, "
            f"{PROBE_WORST_CASE_S} s at worst): give the probe function a timeout of at least 30 s. The `ProbeRunDuration` "
            f"metric near {PROBE_WORST_CASE_S} s "
            "means upstreams are hanging, not that the probe is broken.",
            f"- **Under load with a route flipping to 403**, {load['errors']} of {load['requests']} lookups failed "
            f"({load['fault_flip_errors']} around the flip): the first failure blocks direct for that route in the "
            "container and the same request is answered by the relay; after the cooldown the probe restores direct "
            f"without any operator action. While direct was healthy, {load['direct_share']:.1%} of lookups went direct.",
            "- **The daily quota never makes a lookup wait**: the handler's overhead with it on is "
            f"{results['quota']['overhead_ratio_on_vs_off']:.2f}× the overhead with it off in the request thread's "
            f"CPU time ({request_path['handler_overhead_us_on']:.0f} vs "
            f"{request_path['handler_overhead_us_off']:.0f} µs; two "
            f"identical containers without it differ by {request_path['noise_ratio_off_vs_off']:.2f}× on this "
            f"machine, and the quota's own check takes {request_path['quota_check_us_median']:.0f} µs), "
            f"with {results['quota']['store_calls_on_request_path']} DynamoDB calls on the request path (counts are "
            "flushed in the background). A client hammering through 8 containers at "
            f"{hammering['rate_rps']:.0f} requests/s got {hammering['overshoot_requests']} lookups past "
            f"{hammering['limit']:,} (docs/operations.md's bound for that rate: {hammering['stated_bound']}); through the "
            f"deployed API, whose stage throttle caps a client at 50 requests/s by default, the measured overshoot was "
            f"{throttled['overshoot_requests']} (bound {throttled['stated_bound']}).",
            f"- **DynamoDB costs about ${cost['usd_per_month_30d']:.2f} a month** at "
            f"{cost['breakdown']['warm_containers']} busy containers (assumed list prices; reads scale linearly with "
            "warm containers, writes are fixed by the 5-minute schedule), plus the daily quota's counters: at most one "
            "write per limited lookup.",
            f"- **The whole bill is about ${bill['idle']['total_usd']:.2f} a month idle, "
            f"${bill['100k']['total_usd']:.0f} at 100 k lookups and ${bill['10m']['total_usd']:.0f} at 10 M** "
            f"(assumed prices; table below). Idle, the fixed parts dominate: {_largest(bill['idle'])}; with the "
            f"dashboard, the alarm topic's key and X-Ray switched off (stack parameters), idle is about "
            f"${bill['idle_switched_off']['total_usd']:.2f}. At 10 M: {_largest(bill['10m'])}. The load run "
            f"emitted {results['metric_series']['emitted']} metric series (the worst case is "
            f"{results['metric_series']['worst_case']}, budget {results['metric_series']['budget']}).",
            _cache_meaning(results["cache"]),
        ]
    )


def _cache_meaning(cache: dict[str, Any]) -> str:
    stream = cache["stream"]
    return (
        f"- **A repeated question reaches no retailer or relay while it is fresh.** Of a Zipf stream of "
        f"{stream['lookups']:,} lookups, {stream['no_upstream_share']:.1%} were answered without an upstream call "
        f"({stream['edge_hits']:,} by the edge, {stream['function_hits']:,} by the functions' caches), and each of "
        f"the {stream['distinct_queries']:,} distinct questions went upstream once. An edge hit never reaches the "
        f"lookup function (no Lambda, no API Gateway request, no daily-limit count); a function-cache hit costs "
        f"{cache['hit_overhead_ratio']:.2f}× what the handler adds to a miss. Each container's cache holds at most "
        f"its byte cap ({cache['bytes_at_cap_ratio']:.1%} of it filled), in {cache['memory_growth_ratio']:.2f}× "
        "that much memory."
    )


def _reruns(results: dict[str, Any]) -> str:
    reruns = results["run"].get("reruns", [])
    return "".join(f"; `{' '.join(r['cases'])}` rerun {r['finished_at']}{_load(r)}" for r in reruns)


def _load(run: dict[str, Any]) -> str:
    """The machine's load average at the end of a run (older results have none)."""
    if "load_average" not in run:
        return ""
    return " (load average " + " / ".join(f"{load:.1f}" for load in run["load_average"]) + ")"


def markdown(results: dict[str, Any]) -> str:
    parts = [
        "# Benchmark results (latest run)",
        "",
        f"Run {results['run']['finished_at']} on {results['run']['machine']}, Python {results['run']['python']}, "
        f"{results['run']['duration_s']} s{_load(results['run'])}{_reruns(results)}. Medians over repeated runs; ratios against baselines "
        "measured in the same run. Every field with its details is in `latest.json`.",
        "",
        table(results),
        "",
        _meaning(results),
        "",
        "## The monthly bill (ASSUMED prices; `latest.json` has the prices, assumptions and usage)",
        "",
        bill_table(results),
        "",
    ]
    if NOTES.exists():
        parts += [NOTES.read_text().rstrip(), ""]
    return "\n".join(parts)
