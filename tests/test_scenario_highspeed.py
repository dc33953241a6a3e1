"""Scenario fields of seed 002 (docs/studies/highspeed.md): the `parking_lot` topology and the
`[workload]` generators. Bad values are located errors; the generated flows are the
same for every congestion control (common random numbers); each flow's RTT and hop
count follow the stated construction (core app/workload.rs)."""

import json

import pytest

from tcplab import _core
from tcplab.scenario import Scenario, ScenarioError

BASE = """\
name = "lot"
duration = "20s"
[topology]
kind = "parking_lot"
routers = 5
backbone = { rate = "10Mbps", delay = "15ms", queue = { kind = "drop_tail", limit = "20kB" } }
access_rate = "1Gbps"
[cc]
name = "cubic"
[workload]
rtt_mean = "130ms"
[[workload.classes]]
name = "long"
count = 4
bytes = "2MB"
interarrival_mean = "2s"
mix_fraction = 0.5
[[workload.classes]]
name = "short"
count = 12
size = { dist = "pareto", mean = "10kB", shape = 1.2 }
interarrival_mean = "1s"
"""

#: Flow-table columns that describe the flow, not how it fared.
IDENTITY = ("flow_id", "name", "group", "src", "dst", "start_s", "bytes_target")


def run(text: str, seed: int = 3) -> dict:
    sc = Scenario.from_toml(text, "lot.toml")
    return json.loads(_core.run(sc.to_core_json(seed), seed))


@pytest.mark.parametrize(
    "old, new, path, line, fragment",
    [
        ("routers = 5", "routers = 1", "topology.routers", 5, "must be at least 2; got 1; accepted: a value in [2, 64]"),
        ("mix_fraction = 0.5", "mix_fraction = 1.5", "workload.classes[0].mix_fraction", 17, "got 1.5"),
        ('rtt_mean = "130ms"', 'rtt_mean = "120ms"', "workload.rtt_mean", 11,
         "must exceed the longest path's propagation floor"),
        ('bytes = "2MB"', 'bytes = "2MB"\nsize = { dist = "exponential", mean = "1kB" }', "workload.classes[0].bytes",
         15, "give exactly one of bytes"),
        ('name = "short"', 'name = "long"', "workload.classes[1].name", 19, "duplicate class name"),
        ('name = "short"', 'name = "sh_ort"', "workload.classes[1].name", 19, "letters, digits and '-'"),
        ('interarrival_mean = "1s"', 'interarrival_mean = "0s"', "workload.classes[1].interarrival_mean", 22,
         "got '0s'"),
    ],
)
def test_each_bad_value_is_one_located_error(old: str, new: str, path: str, line: int, fragment: str) -> None:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(BASE.replace(old, new, 1), "lot.toml")
    e = info.value
    assert (e.file, e.path) == ("lot.toml", path), str(e)
    assert e.line == line, str(e)
    assert fragment in str(e), str(e)


def test_a_class_tcp_override_the_core_refuses_names_the_class() -> None:
    text = BASE.replace('interarrival_mean = "2s"', 'interarrival_mean = "2s"\ntcp = { rcv_buffer = "100B" }')
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text, "lot.toml")
    assert (info.value.path, info.value.line) == ("workload.classes[0].tcp.rcv_buffer", 17), str(info.value)
    assert "must hold at least one segment" in str(info.value)


def test_a_host_on_a_missing_router_and_a_workload_without_a_lot_are_refused() -> None:
    text = BASE + '[[topology.hosts]]\nname = "x"\nrouter = 5\ndelay = "1ms"\n'
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text, "lot.toml")
    assert info.value.path == "topology.hosts[0].router" and "0 to 4" in str(info.value), str(info.value)
    dumbbell = BASE.split("[topology]")[0] + (
        '[topology]\nkind = "dumbbell"\nbottleneck = { rate = "1Mbps", delay = "1ms" }\n'
        'sender_access = { rate = "1Gbps", delay = "1ms" }\nreceiver_access = { rate = "1Gbps", delay = "1ms" }\n'
        "[workload]" + BASE.split("[workload]")[1]
    )
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(dumbbell, "lot.toml")
    assert info.value.path == "workload" and "parking_lot" in str(info.value), str(info.value)


def test_two_runs_differing_only_in_cc_have_the_same_flows() -> None:
    """Common random numbers: sizes, starts, paths (hence groups and hosts), RTTs and
    the Reno mix are the same under CUBIC and Scalable; outcomes differ."""
    a = run(BASE)
    b = run(BASE.replace('name = "cubic"', 'name = "scalable"'))
    fa, fb = a["flows"], b["flows"]
    assert len(fa["name"]) == 16
    for col in IDENTITY:
        assert fa[col] == fb[col], col
    # Mixed-in Reno flows are the same flows in both runs: round(0.5 x 4) = 2 long ones.
    reno_a = [n for n, cc in zip(fa["name"], fa["cc"]) if cc == "reno"]
    reno_b = [n for n, cc in zip(fb["name"], fb["cc"]) if cc == "reno"]
    assert reno_a == reno_b and len(reno_a) == 2
    assert {cc for cc in fb["cc"]} == {"reno", "scalable"}
    # Access delays (the RTT draws) are the same link for link.
    assert a["links"]["link"] == b["links"]["link"] and a["links"]["delay_s"] == b["links"]["delay_s"]
    # The protocols did run differently (the test could fail).
    assert fa["completed_s"] != fb["completed_s"]
    # Another seed draws other flows.
    c = run(BASE, seed=4)
    assert c["flows"]["start_s"] != fa["start_s"]


def test_rtt_construction_and_hop_counts() -> None:
    """RTT = 2 x hops x 15 ms + 2 x (source + destination access delay), the two access
    delays are equal (the excess split in four), and the hop count in the group is the
    distance between the routers the host links attach to."""
    r = run(BASE.replace("count = 12", "count = 60"))
    links = r["links"]
    by_name = {n: i for i, n in enumerate(links["link"])}
    rtts = []
    for name, group in zip(r["flows"]["name"], r["flows"]["group"]):
        hops = int(group.rsplit("_h", 1)[1])
        s, d = by_name[f"acc_{name}_s"], by_name[f"acc_{name}_d"]
        entry, exit_ = int(links["to"][s][1:]), int(links["to"][d][1:])
        assert abs(entry - exit_) == hops and 1 <= hops <= 4
        assert links["delay_s"][s] == links["delay_s"][d]
        rtt = 2 * hops * 0.015 + 2 * (links["delay_s"][s] + links["delay_s"][d])
        assert rtt >= 2 * hops * 0.015
        rtts.append(rtt)
    # 64 flows, E[RTT] = 130 ms; the excess is exponential with mean at most 100 ms,
    # so the standard error of the mean is below 100 / sqrt(64) = 12.5 ms: 4 SE = 50 ms.
    mean = sum(rtts) / len(rtts)
    assert abs(mean - 0.130) < 0.050, mean
    # Backbone links are the seed's 8, named for grouping.
    assert [n for n in links["link"] if n.startswith("bb")] == [
        "bb0", "bb0_rev", "bb1", "bb1_rev", "bb2", "bb2_rev", "bb3", "bb3_rev"]


SESSIONS = BASE.replace('count = 12', 'count = 12\nmode = "sessions"').replace(
    'count = 4', 'count = 4\nmode = "sessions"')


def test_sessions_fetch_objects_through_the_run_with_the_same_objects_for_every_protocol() -> None:
    """`mode = "sessions"`: each session keeps fetching objects (1 s mean gap between
    object starts over 20 s: about 20 per short session), on its own hosts, the same
    objects under CUBIC and Scalable."""
    a = run(SESSIONS)
    b = run(SESSIONS.replace('name = "cubic"', 'name = "scalable"'))
    fa, fb = a["flows"], b["flows"]
    for col in IDENTITY:
        assert fa[col] == fb[col], col
    assert [cc == "reno" for cc in fa["cc"]] == [cc == "reno" for cc in fb["cc"]]
    shorts = [(n, s, src) for n, s, src in zip(fa["name"], fa["start_s"], fa["src"]) if n.startswith("short")]
    # 12 sessions x 20 s / 1 s = 240 objects expected (Poisson, std 15.5): within 4 std.
    assert abs(len(shorts) - 240) < 62, len(shorts)
    assert all(src == n.split(".")[0] + "_s" for n, _, src in shorts)
    # Objects keep arriving: some in the last quarter of the run.
    assert sum(1 for _, s, _ in shorts if s >= 15.0) > 20
    assert max(s for _, s, _ in shorts) < 20.0


def test_a_session_class_needs_a_duration_and_the_rtt_readings_are_checked() -> None:
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(SESSIONS.replace('duration = "20s"\n', ""), "lot.toml")
    assert "duration" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(BASE.replace('rtt_mean = "130ms"', 'rtt_mean = "50ms"\nrtt_reading = "common_excess"'),
                           "lot.toml")
    assert "mean propagation floor" in str(e.value)
    # Under common_excess (mean floor 60 ms, excess mean 70 ms) the RTT grows with the hop count.
    r = run(BASE.replace('rtt_mean = "130ms"', 'rtt_reading = "common_excess"').replace("count = 12", "count = 400"))
    links = r["links"]
    by_name = {n: i for i, n in enumerate(links["link"])}
    by_hops: dict[int, list[float]] = {}
    for name, group in zip(r["flows"]["name"], r["flows"]["group"]):
        hops = int(group.rsplit("_h", 1)[1])
        d = links["delay_s"][by_name[f"acc_{name}_s"]] + links["delay_s"][by_name[f"acc_{name}_d"]]
        by_hops.setdefault(hops, []).append(2 * hops * 0.015 + 2 * d)
    means = {h: sum(v) / len(v) for h, v in by_hops.items()}
    # E[RTT | h] = 30 h + 70 ms; 1-hop flows (about 160, std of the mean 5.5 ms) against
    # 3-hop ones (about 80, 7.8 ms): the expected gap is 60 ms, so > 20 ms is 4 std away.
    assert means[3] - means[1] > 0.020, means
