"""Request/response applications (``kind = "rpc"``): scenario fields, their errors with
file lines, the core JSON they map to, and the transactions table of a run."""

from pathlib import Path

import pytest

import tcplab
from tcplab.results import COLUMNS
from tcplab.scenario import Arrivals, RpcFlow, Scenario, ScenarioError
from tcplab.scenario.flows import rate_for_load, response_wire_bytes

ROOT = Path(__file__).resolve().parent.parent

# Line numbers below refer to this text.
RPC = '''\
name = "rpc"
duration = "20s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "2Mbps", delay = "50ms", queue = { kind = "drop_tail", limit = "50pkt" } }
sender_access = { rate = "100Mbps", delay = "0ms" }
receiver_access = { rate = "100Mbps", delay = "0ms" }
[[flows]]
kind = "rpc"
count = 2
request = "200B"
response = "15kB"
arrivals = { process = "poisson", load = 0.5 }
batch = 5
iw_mix = [3, 10]
stop = "10s"
'''


def error_of(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text, "rpc.toml")
    return info.value


@pytest.mark.parametrize(
    "edit, path, line, fragments",
    [
        (('load = 0.5', 'load = -0.5'), "flows[0].arrivals.load", 14, ["got -0.5"]),
        (('load = 0.5', 'load = 0.5, rate = 2.0'), "flows[0].arrivals.load", 14, ["either rate or load"]),
        (('load = 0.5', 'load = 0.5, link = "botleneck"'), "flows[0].arrivals.link", 14,
         ["no such link", "Did you mean 'bottleneck'"]),
        (('process = "poisson", load = 0.5', 'process = "poison", load = 0.5'), "flows[0].arrivals.process", 14,
         ["Did you mean 'poisson'"]),
        (('process = "poisson", load = 0.5', 'process = "periodic"'), "flows[0].arrivals.interval", 14,
         ["is required when process = \"periodic\""]),
        (('process = "poisson", load = 0.5', 'process = "times", at = ["2s", "1s"]'), "flows[0].arrivals.at[1]", 14,
         ["in order", "1s"]),
        (('batch = 5', 'batch = 0'), "flows[0].batch", 15, ["got 0"]),
        (('iw_mix = [3, 10]', 'iw_mix = [3, 0]'), "flows[0].iw_mix[1]", 16, ["at least 1 segment"]),
        (('response = "15kB"', 'response = "15"'), "flows[0].response", 13, ["has no unit"]),
        (('response = "15kB"', 'response = "15kB"\nresponse_dist = { dist = "exponential", mean = "15kB" }'),
         "flows[0].response_dist", 14, ["either response (constant) or response_dist"]),
        (('response = "15kB"', 'response_dist = { dist = "pareto", mean = "15kB", shape = 0.9 }'),
         "flows[0].response_dist.shape", 13, ["got 0.9"]),
        (('response = "15kB"', 'response_dist = { dist = "uniform", mean = "15kB" }'),
         "flows[0].response_dist.min", 13, ["is required when dist = \"uniform\""]),
        (('stop = "10s"', 'stop = "10s"\nserver = "x9"'), "flows[0].server", 18, ["unknown node", "s0"]),
        (('duration = "20s"\n', '', ), "flows[0].stop", 17, ["never end"]),
    ],
)
def test_each_rpc_mistake_is_one_located_error(edit, path: str, line: int, fragments: list[str]) -> None:
    text = RPC.replace(*edit)
    if path == "flows[0].stop":
        text = text.replace('stop = "10s"\n', "")
        line = 8  # the entry's [[flows]] header (the duration line is gone): the field is missing
    e = error_of(text)
    assert (e.file, e.path) == ("rpc.toml", path), str(e)
    assert e.line == line, str(e)
    for frag in fragments:
        assert frag in str(e), str(e)


def test_core_json_splits_the_load_and_cycles_the_iw_mix() -> None:
    core = Scenario.from_toml(RPC).to_core()
    a, b = core["flows"]
    assert (a["kind"], a["server"], a["client"], b["server"], b["client"]) == ("rpc", "s0", "d0", "s1", "d1")
    assert a["arrivals"] == {"process": "poisson", "load": 0.25} and a["batch"] == 5
    assert (a["tcp"]["iw"], b["tcp"]["iw"]) == (3, 10)
    assert a["request"] == {"dist": "constant", "bytes": 200} and a["stop"] == 10_000_000_000
    # The load arithmetic the docs show: W = 15 000 + 11 x 40 = 15 440 B.
    assert response_wire_bytes(15_000) == 15_440
    assert rate_for_load(0.96, 20_000_000, 15_440) == pytest.approx(155.44, abs=5e-3)
    assert Arrivals(rate=4.0).to_core(2) == {"process": "poisson", "rate": 2.0}


def test_round_trip_and_defaults() -> None:
    sc = Scenario.from_toml(RPC)
    assert Scenario.from_toml(sc.to_toml()) == sc
    f = RpcFlow(arrivals=Arrivals(process="times", at=["1s"]))
    assert f.sizes_core() == ({"dist": "constant", "bytes": 200}, {"dist": "constant", "bytes": 15_000})


def test_a_run_fills_the_transactions_table() -> None:
    r = tcplab.run(Scenario.from_toml(RPC), seed=2)
    t = r.transactions
    assert list(t.columns[: len(COLUMNS["transactions"])]) == list(COLUMNS["transactions"])
    assert len(t) > 0 and set(t["iw_segments"]) == {3, 10}
    assert set(t["app"]) == {"flow0.0", "flow0.1"} and set(t["client"]) == {"d0", "d1"}
    assert (t.groupby(["app", "batch"]).size() == 5).all()
    done = t[t["state"] == "closed"]
    assert done["uct_s"].to_numpy() == pytest.approx((done["completed_s"] - done["start_s"]).to_numpy(), abs=1e-9)
    assert (done["bytes_delivered"] == 15_000).all()


def test_examples_of_the_study_are_valid_scenarios() -> None:
    for f in sorted((ROOT / "examples" / "iw-testbed").glob("*.toml")):
        core = Scenario.load(f).to_core()
        assert [x["kind"] for x in core["flows"]][:4] == ["rpc"] * 4, f


def test_docstring_examples_of_the_flows_module() -> None:
    import doctest

    from tcplab.scenario import flows

    result = doctest.testmod(flows, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
