"""Scenario files and the Python API (tcplab.scenario): validation, lines, round trips."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplab import _core
from tcplab.scenario import (
    EXAMPLE_TOML,
    Access,
    CcOptions,
    DropTail,
    Dumbbell,
    Graph,
    GraphLink,
    Interval,
    Link,
    Record,
    Scenario,
    ScenarioError,
    TcpFlow,
    TcpOptions,
    TomlLocator,
    UdpFlow,
)

BASE = EXAMPLE_TOML  # tcp table at lines 10-12, [[flows]] at 14, bytes at 15


def error_of(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text, "exp.toml")
    return info.value


@pytest.mark.parametrize(
    "edit, path, line, fragments",
    [
        (("iw = 10", "iww = 10"), "tcp.iww", 12, ["unknown field", "Did you mean 'iw'"]),
        (('delay = "70ms"', "delay = 70"), "topology.bottleneck.delay", 6, ["without a unit", "got 70", "'70ms'"]),
        (('rate = "2Mbps"', 'rate = "-2Mbps"'), "topology.bottleneck.rate", 6, ["negative", "-2Mbps"]),
        (('rate = "2Mbps"', 'rate = "0bps"'), "topology.bottleneck.rate", 6, ["at least 1bps"]),
        (("iw = 10", "iw = 0"), "tcp.iw", 12, ["at least 1 segment", "got 0", "rfc3390"]),
        (('limit = "48pkt" }', 'limit = "40kB", semantics = "slot" }'), "topology.bottleneck.queue.limit", 6, ["needs a limit in packets", "'48pkt'"]),
        (('limit = "48pkt" }', 'limit = "48pkt", semantics = "byte_loose" }'), "topology.bottleneck.queue.limit", 6, ["needs a limit in bytes"]),
        (('"ns2-sack"', '"ns2sack"'), "tcp.profile", 11, ["got 'ns2sack'", "linux, ns2-sack", "Did you mean 'ns2-sack'"]),
        (('kind = "drop_tail"', 'kind = "droptail"'), "topology.bottleneck.queue.kind", 6, ["Did you mean 'drop_tail'"]),
        (('"180kB"', '"180KB"'), "flows[0].bytes", 15, ["KiB"]),
        (('kind = "dumbbell"', 'kind = "dumbell"'), "topology.kind", 4, ["Did you mean 'dumbbell'"]),
        # Issue 14's fields: each bad value is one located error naming what is accepted.
        (('kind = "drop_tail", limit = "48pkt"', 'kind = "fq_codl"'), "topology.bottleneck.queue.kind", 6,
         ["Did you mean 'fq_codel'", "codel", "pie"]),
        (('kind = "drop_tail", limit = "48pkt"', 'kind = "codel", target = 5'), "topology.bottleneck.queue.target", 6,
         ["without a unit", "got 5"]),
        (('kind = "drop_tail", limit = "48pkt"', 'kind = "fq_codel", quantum = "100B"'),
         "topology.bottleneck.queue.quantum", 6, ["256"]),
        (('kind = "drop_tail", limit = "48pkt"', 'kind = "pie", alpha = 3.0'), "topology.bottleneck.queue.alpha", 6,
         ["2"]),
        (("iw = 10", 'prr = "srrb"'), "tcp.prr", 12, ["got 'srrb'", "crb", "Did you mean 'ssrb'"]),
        (("iw = 10", 'rtt_estimator = "linx"'), "tcp.rtt_estimator", 12, ["rfc6298", "Did you mean 'linux'"]),
        (("iw = 10", 'rack = "yes"'), "tcp.rack", 12, ["yes"]),
        (("iw = 10", 'linux_cc = 1.5'), "tcp.linux_cc", 12, ["1.5"]),
    ],
)
def test_each_mistake_is_one_clear_located_error(edit, path: str, line: int, fragments: list[str]) -> None:
    e = error_of(BASE.replace(*edit))
    assert (e.file, e.line, e.path) == ("exp.toml", line, path), str(e)
    text = str(e)
    assert text.startswith(f"exp.toml:{line}: {path}: ")
    for frag in fragments:
        assert frag in text


def test_unknown_congestion_control_suggests_a_registered_one() -> None:
    e = error_of(BASE + '\n[cc]\nname = "rneo"\n')
    assert (e.path, e.line) == ("cc.name", 18)
    assert "accepted: reno" in str(e) and "Did you mean 'reno'" in str(e)


def test_unknown_cc_parameter_is_named() -> None:
    e = error_of(BASE + '\n[cc]\nname = "reno"\nparams = { beta = 0.5 }\n')
    assert e.path == "cc.params.beta" and "unknown parameter" in str(e)


def test_core_tcp_checks_are_mapped_to_the_flow_field() -> None:
    e = error_of(BASE + 'tcp = { min_rto = "200s" }\n')
    assert e.path == "flows[0].tcp.min_rto" and e.line == 16
    assert "min_rto must not exceed tcp.max_rto" in str(e)


def test_unknown_node_and_duplicate_names() -> None:
    e = error_of(BASE + 'src = "s5"\n')
    assert e.path == "flows[0].src" and "accepted: s0, r0, r1, d0" in str(e)
    e = error_of(BASE + 'name = "a"\n[[flows]]\nname = "a"\n')
    assert e.path == "flows[1].name" and "duplicate" in str(e) and e.line == 18


def test_missing_required_field_points_at_its_table() -> None:
    e = error_of(BASE.replace('sender_access = { rate = "100Mbps", delay = "11ms" }\n', ""))
    assert e.path == "topology.sender_access" and e.line == 3 and "required" in str(e)


def test_invalid_toml_names_the_line() -> None:
    e = error_of(BASE + "oops = \n")
    assert e.line == 16 and "not valid TOML" in str(e)


def test_sweep_table_is_refused_by_plain_scenarios() -> None:
    e = error_of(BASE + '\n[sweep]\nreplications = 2\n')
    assert e.path == "sweep" and "tcplab sweep" in str(e)


def test_locator_follows_headers_arrays_dotted_and_inline_keys() -> None:
    text = '[topology]\nkind = "graph"\n[[topology.links]]\nname = "a"\n[[topology.links]]\nname = "b"\n' \
           'queue.kind = "x"\n[[flows]]\n[flows.tcp]\niw = 3\n[sweep]\n"tcp.iw" = [1]\n'
    loc = TomlLocator(text)
    assert loc.line("topology.links[1].name") == 6
    assert loc.line("topology.links[1].queue.kind") == 7
    assert loc.line("flows[0].tcp.iw") == 10
    assert loc.line("sweep.tcp.iw") == 12
    assert loc.line("flows[3].x") is None or loc.line("flows[3].x") == 8


def test_to_core_is_accepted_by_the_core_schema_for_tcp() -> None:
    core = Scenario.from_toml(BASE).to_core()
    flow = core["flows"][0]
    assert flow == {
        "kind": "tcp", "name": "flow0", "group": "", "src": "s0", "dst": "d0", "start": 0, "stop": None,
        "bytes": 180_000, "cc": {"name": "reno", "params": {}}, "tcp": {"profile": "ns2-sack", "iw": 10},
    }
    resolved = json.loads(_core.resolve_tcp(json.dumps(flow["tcp"])))
    assert resolved["iw"] == 10 and resolved["initial_rto"] == 3_000_000_000
    topo = core["topology"]
    assert topo["bottleneck"]["queue"] == {"kind": "drop_tail", "limit": {"packets": 48}, "semantics": None, "count_in_service": False}
    assert topo["sender_access"] == {"rate": 100_000_000, "delay": 11_000_000, "queue": None}
    assert core["max_duration"] == 3600 * 10**9 and core["duration"] is None


def test_flow_groups_expand_across_pairs_with_overrides() -> None:
    text = BASE.replace("pairs = 1", "pairs = 3") + '''
[[flows]]
group = "burst2"
count = 4
bytes_total = "180kB"
start = "5s"
start_spacing = "10ms"
tcp = { iw = 3 }
cc = { name = "reno" }
'''
    flows = Scenario.from_toml(text).to_core()["flows"]
    burst = [f for f in flows if f["group"] == "burst2"]
    assert [f["name"] for f in burst] == ["burst2.0", "burst2.1", "burst2.2", "burst2.3"]
    assert [f["src"] for f in burst] == ["s0", "s1", "s2", "s0"]
    assert [f["dst"] for f in burst] == ["d0", "d1", "d2", "d0"]
    assert sum(f["bytes"] for f in burst) == 180_000 and {f["bytes"] for f in burst} == {45_000}
    assert [f["start"] for f in burst] == [5_000_000_000 + j * 10_000_000 for j in range(4)]
    assert all(f["tcp"] == {"profile": "ns2-sack", "iw": 3} for f in burst)  # flow wins, profile kept


def test_start_jitter_depends_on_seed_only() -> None:
    text = BASE + 'count = 5\nstart_jitter = "1s"\n'
    sc = Scenario.from_toml(text)
    a, b, c = sc.to_core(seed=1), sc.to_core(seed=1), sc.to_core(seed=2)
    starts = [f["start"] for f in a["flows"]]
    assert starts == [f["start"] for f in b["flows"]]
    assert starts != [f["start"] for f in c["flows"]]
    assert all(0 <= s <= 1_000_000_000 for s in starts) and len(set(starts)) == 5
    # A different congestion control does not change the draws (common random numbers).
    other = Scenario.from_toml(text.replace('profile = "ns2-sack"', 'profile = "linux"'))
    assert [f["start"] for f in other.to_core(seed=1)["flows"]] == starts


def test_python_api_builds_the_same_scenario_as_the_file() -> None:
    built = Scenario(
        name="hspa-iw10",
        topology=Dumbbell(
            bottleneck=Link(rate="2Mbps", delay="70ms", queue=DropTail(limit="48pkt")),
            sender_access=Access(rate="100Mbps", delay="11ms"),
            receiver_access=Access(rate="100Mbps", delay="1ms"),
        ),
        tcp=TcpOptions(profile="ns2-sack", iw=10),
        flows=[TcpFlow(bytes="180kB")],
    )
    assert built == Scenario.from_toml(BASE)
    assert built.to_core() == Scenario.from_toml(BASE).to_core()


def test_python_api_checks_values_too() -> None:
    with pytest.raises(ScenarioError, match="rate: a rate cannot be negative"):
        Link(rate="-1Mbps", delay="1ms")
    with pytest.raises(ScenarioError, match="sigma: is required"):
        Interval(dist="normal", mean="20ms")


def rich_scenario() -> Scenario:
    return Scenario(
        name="voice",
        duration="20s",
        topology=Graph(
            nodes=["a", "r", "b"],
            links=[
                GraphLink(name="ar", from_="a", to="r", rate="24Mbps", delay="5ms"),
                GraphLink(name="ra", from_="r", to="a", rate="1Mbps", delay="5ms"),
                GraphLink(name="rb", from_="r", to="b", rate="24Mbps", delay="7ms",
                          queue=DropTail(limit="52.5kB", semantics="byte_loose")),
                GraphLink(name="br", from_="b", to="r", rate="1Mbps", delay="7ms"),
            ],
        ),
        tcp=TcpOptions(profile="linux", sack=False, initial_rto="3s"),
        cc=CcOptions(name="reno"),
        flows=[
            TcpFlow(name="bulk", src="a", dst="b", stop="15s"),
            UdpFlow(name="voice", src=["a", "b"], dst=["b", "a"], count=2, packet_size="186B",
                    interval=Interval(dist="normal", mean="20ms", sigma="1ms")),
        ],
        record=Record(cwnd=True, queue=["*"], owd=["voice"], busy_sample_interval="1s", throughput_interval="250ms",
                      packets=["voice", "bulk"]),
    )


def test_round_trip_python_toml_python() -> None:
    sc = rich_scenario()
    again = Scenario.from_toml(sc.to_toml())
    assert again == sc
    core = again.to_core()
    assert core["record"]["queue"] == ["ar", "ra", "rb", "br"]
    assert core["record"]["owd"] == ["voice.0", "voice.1"]
    assert core["record"]["packets"] == ["voice.0", "voice.1", "bulk"]
    assert core["record"]["throughput_interval"] == 250_000_000
    assert [f["src"] for f in core["flows"]] == ["a", "a", "b"]
    assert core["flows"][1]["interval"] == {"dist": "normal", "mean": 20_000_000, "sigma": 1_000_000}


@settings(max_examples=60, deadline=None)
@given(
    rate=st.integers(1, 10**10),
    delay=st.integers(0, 10**10),
    iw=st.one_of(st.integers(1, 100), st.just("rfc3390")),
    limit=st.one_of(st.tuples(st.just("packets"), st.integers(1, 10**4)), st.tuples(st.just("bytes"), st.integers(1, 10**8))),
    count=st.integers(1, 5),
    nbytes=st.integers(1, 10**9),
)
def test_round_trip_property(rate: int, delay: int, iw, limit, count: int, nbytes: int) -> None:
    sc = Scenario(
        topology=Dumbbell(
            pairs=2,
            bottleneck=Link(rate=f"{rate}bps", delay=f"{delay}ns", queue=DropTail(limit=limit)),
            sender_access=Access(rate="1Gbps", delay=[f"{delay}ns", "0s"]),
            receiver_access=Access(rate="1Gbps", delay="0s"),
        ),
        tcp=TcpOptions(iw=iw),
        flows=[TcpFlow(count=count, bytes=f"{nbytes}B")],
    )
    assert Scenario.from_toml(sc.to_toml()) == sc


toml_values = st.recursive(
    st.one_of(st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False), st.text(max_size=8),
              st.sampled_from(["2Mbps", "70ms", "48pkt", "180kB", "drop_tail", "dumbbell", "s0", "reno", "-1s"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)
keys = st.sampled_from(["name", "topology", "flows", "tcp", "cc", "record", "kind", "pairs", "bottleneck",
                        "rate", "delay", "queue", "limit", "iw", "bytes", "count", "src", "x"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, st.one_of(toml_values, st.dictionaries(keys, toml_values, max_size=5)), max_size=6))
def test_random_documents_only_raise_scenario_errors(doc) -> None:
    try:
        Scenario.from_dict(doc)
    except ScenarioError as e:
        assert str(e)


RED_MARKOV = """
name = "edge-red-markov"
duration = "20s"
[topology]
kind = "dumbbell"
pairs = 1
[topology.bottleneck]
rate = "160kbps"
delay = "250ms"
queue = { kind = "red", limit = "14pkt", q_weight = 0.002, min_th = 3, max_th = 9, max_p = 0.1, gentle = false, wait = false, mean_pktsize = "1500B", idle_pktsize = "1500B" }
error = { kind = "markov", form = "preset", name = "high" }
[topology.sender_access]
rate = "100Mbps"
delay = "11ms"
[topology.receiver_access]
rate = "100Mbps"
delay = "0ms"
[[flows]]
kind = "tcp"
src = "s0"
dst = "d0"
bytes = "180kB"
"""


def test_red_and_markov_reach_the_core_and_run() -> None:
    import tcplab

    sc = Scenario.from_toml(RED_MARKOV)
    core = sc.to_core()
    q = core["topology"]["bottleneck"]["queue"]
    assert q["kind"] == "red" and q["min_th"] == 3.0 and q["max_th"] == 9.0 and q["mean_pktsize"] == 1500
    assert q["gentle"] is False and q["wait"] is False
    assert core["topology"]["bottleneck"]["error"] == {"kind": "markov", "form": "preset", "name": "high"}
    r = tcplab.run(sc, seed=1)
    links = r.links.set_index("link")
    assert links.loc["bottleneck", "realised_per"] > 0  # the Markov channel lost packets
    assert r.flows["bytes_delivered"].iloc[0] == 180_000
    # Round trip through TOML keeps both.
    assert Scenario.from_toml(sc.to_toml()).to_core() == core


@pytest.mark.parametrize(
    "edit, field, needle",
    [
        (('form = "preset", name = "high"', 'form = "sojourn"'), "error.mean_good", "required by form 'sojourn'"),
        (('name = "high"', 'name = "hihg"'), "error.name", "Did you mean 'high'"),
        (("max_th = 9", "max_th = 2"), "queue.max_th", "must exceed min_th"),
        (('form = "preset", name = "high"', 'form = "preset", name = "high", p_gb = 0.1'), "error.p_gb", "does not apply"),
    ],
)
def test_red_and_markov_errors_name_the_field(edit: tuple[str, str], field: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(RED_MARKOV.replace(*edit))
    assert field in str(e.value) and needle in str(e.value)


from tcplab.scenario import Bernoulli, Markov, Red  # noqa: E402

queues = st.one_of(
    st.none(),
    st.builds(DropTail, limit=st.tuples(st.just("packets"), st.integers(1, 10**4)),
              count_in_service=st.booleans()),
    st.builds(DropTail, limit=st.tuples(st.just("bytes"), st.integers(1, 10**7)),
              semantics=st.sampled_from([None, "byte_strict", "byte_loose"])),
    st.builds(Red, limit=st.tuples(st.just("packets"), st.integers(1, 500)), q_weight=st.floats(0, 1, exclude_min=True),
              min_th=st.just(3.0), max_th=st.floats(4, 100), max_p=st.floats(0, 1, exclude_min=True), gentle=st.booleans(),
              mean_pktsize=st.integers(1, 9000).map(lambda n: f"{n}B")),
)
errors = st.one_of(
    st.none(),
    st.builds(Bernoulli, per=st.floats(0, 1)),
    st.builds(Markov, form=st.just("preset"), name=st.sampled_from(["low", "medium", "high", "vhigh", "huge"])),
    st.builds(Markov, form=st.just("sojourn"), mean_good=st.integers(1, 10**10).map(lambda n: f"{n}ns"),
              mean_bad=st.integers(1, 10**9).map(lambda n: f"{n}ns"),
              loss_bad=st.floats(0, 1)),
)
graph_links = st.lists(st.tuples(st.integers(1, 10**10).map(lambda n: f"{n}bps"), st.integers(0, 10**9).map(lambda n: f"{n}ns"),
                                  queues, errors), min_size=2, max_size=2)


@settings(max_examples=80, deadline=None)
@given(
    links=graph_links,
    udp_mean=st.integers(1, 10**9).map(lambda n: f"{n}ns"),
    sigma=st.integers(0, 10**7).map(lambda n: f"{n}ns"),
    size=st.integers(1, 65535).map(lambda n: f"{n}B"),
    cc=st.sampled_from(["reno", "cubic", "bbr"]),
    record=st.builds(Record, cwnd=st.booleans(), drops=st.booleans(), queue=st.sampled_from([[], ["*"], ["ab"]]),
                     busy_sample_interval=st.one_of(st.none(), st.integers(1, 10**10).map(lambda n: f"{n}ns")),
                     throughput_interval=st.one_of(st.none(), st.integers(1, 10**10).map(lambda n: f"{n}ns")),
                     packets=st.sampled_from([[], ["*"]])),
    duration=st.one_of(st.none(), st.integers(1, 10**12).map(lambda n: f"{n}ns")),
)
def test_round_trip_property_every_table_kind(links, udp_mean: str, sigma: str, size: str, cc: str, record, duration) -> None:
    """Model -> TOML -> model is the identity, for graphs, RED, Markov, UDP flows and [record]."""
    (r1, d1, q1, e1), (r2, d2, q2, e2) = links
    sc = Scenario(
        name="property",
        duration=duration,
        topology=Graph(nodes=["a", "b"], links=[
            GraphLink(name="ab", from_="a", to="b", rate=r1, delay=d1, queue=q1, error=e1),
            GraphLink(name="ba", from_="b", to="a", rate=r2, delay=d2, queue=q2, error=e2),
        ]),
        cc=CcOptions(name=cc),
        flows=[
            TcpFlow(src="a", dst="b", bytes="1MB", tcp=TcpOptions(sack=False, min_rto="200ms")),
            UdpFlow(src=["a", "b"], dst=["b", "a"], count=2, packet_size=size,
                    interval=Interval(dist="normal", mean=udp_mean, sigma=sigma)),
        ],
        record=record,
    )
    again = Scenario.from_toml(sc.to_toml())
    assert again == sc
    assert again.to_core() == sc.to_core()


def test_record_series_off_leave_the_core_scenario_as_it_was() -> None:
    """Without the two packet series the core's ``record`` has exactly the keys it had
    before they existed, so resolved scenarios, and the keys of stored sweep and study
    runs that hash them, do not change."""
    core = Scenario.from_toml(EXAMPLE_TOML).to_core()
    assert sorted(core["record"]) == ["busy_sample_interval", "cwnd", "drops", "owd", "queue"]
    on = Scenario.from_toml(EXAMPLE_TOML + '[record]\nthroughput_interval = "100ms"\npackets = ["*"]\n').to_core()
    assert (on["record"]["throughput_interval"], on["record"]["packets"]) == (100_000_000, ["*"])
