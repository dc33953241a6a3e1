"""`tcplab check` is as strict as `tcplab run`: the same refusals, every problem at once, each on its line.

Each bad input is given to `check` and to `run` (or `sweep`, for an experiment file): both
exit with 2 and print the same lines, one per problem, naming the file, the line and the
field. The Python builders follow the same rules. The last test mutates the example files
at random and checks that `check` and `run` never disagree.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcplab
from tcplab.cli import main
from tcplab.scenario import EXAMPLE_TOML, Scenario, ScenarioError, parse_toml, read_text

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

DUMBBELL = '''\
name = "x"
duration = "200ms"

[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "2Mbps", delay = "20ms", queue = { kind = "drop_tail", limit = "48pkt" } }
sender_access = { rate = "100Mbps", delay = "1ms" }
receiver_access = { rate = "100Mbps", delay = "1ms" }
'''

GRAPH = '''\
duration = "200ms"

[topology]
kind = "graph"
nodes = ["a", "b", "c"]

[[topology.links]]
name = "ab"
from = "a"
to = "b"
rate = "10Mbps"
delay = "1ms"

[[topology.links]]
name = "ba"
from = "b"
to = "a"
rate = "10Mbps"
delay = "1ms"

[[flows]]
src = "a"
dst = "c"
'''

#: (name, file text, [(text on the line, field, words in the message)]): what `check` and `run` both refuse.
REFUSED = [
    ("cubic-beta", DUMBBELL + '[cc]\nname = "cubic"\nparams = { beta = 7 }\n[[flows]]\nbytes = "10kB"\n',
     [("beta = 7", "cc.params.beta", "not accepted by congestion control 'cubic'; got 7; accepted: 0 < beta < 1")]),
    ("bbr-cycle-start", DUMBBELL + '[[flows]]\nbytes = "10kB"\ncc = { name = "bbr", params = { cycle_start = 9 } }\n',
     [("cycle_start = 9", "flows[0].cc.params.cycle_start",
       "not accepted by congestion control 'bbr'; got 9; accepted: 0..=7")]),
    ("no-route", GRAPH, [('dst = "c"', "flows[0].dst", "no route between 'a' and 'c'")]),
    ("stop-before-start", DUMBBELL + '[[flows]]\nstart = "1s"\nstop = "500ms"\n',
     [('stop = "500ms"', "flows[0].stop", "must come after start; otherwise the flow would send nothing; got '500ms'")]),
    ("stop-before-a-group-start", DUMBBELL + '[[flows]]\ncount = 3\nstart_spacing = "1s"\nstop = "1500ms"\n',
     [('stop = "1500ms"', "flows[0].stop",
       "must come after the latest start of its flows (2s: start + (count - 1) x start_spacing")]),
    ("fq-codel-target", DUMBBELL.replace('queue = { kind = "drop_tail", limit = "48pkt" }',
                                         'queue = { kind = "fq_codel", target = "200ms", interval = "100ms" }')
     + '[[flows]]\nbytes = "10kB"\n',
     [('target = "200ms"', "topology.bottleneck.queue.target", "must not exceed interval (100ms); got '200ms'")]),
    ("inline-links-over-lines", GRAPH.split("[[topology.links]]")[0].replace('nodes = ["a", "b", "c"]', (
        'nodes = ["a", "b", "c"]\nlinks = [\n'
        '  { name = "ab", from = "a", to = "b", rate = "10Mbps", delay = "1ms" },\n'
        '  { name = "ba", from = "b", to = "a", rate = "10Mbps", delay = "1ms" },\n'
        '  { name = "bc", from = "b", to = "c", rate = "10Mbps", delay = "1ms", queue = { kind = "codel", '
        'target = "1s" } },\n'
        '  { name = "cb", from = "c", to = "b", rate = "10Mbps", delay = "1ms" },  # back\n]')) + '[[flows]]\nsrc = "a"\ndst = "c"\n',
     [('target = "1s"', "topology.links[2].queue.target", "must not exceed interval (100ms); got '1s'")]),
    ("every-problem-at-once", DUMBBELL + '[cc]\nname = "cubic"\nparams = { beta = 7 }\n'
     '[[flows]]\nbytes = "10kB"\ncc = { name = "bbr", params = { cycle_start = 9 } }\n'
     '[[flows]]\nbytes = "10kB"\ncc = { name = "scalable", params = { md = 2 } }\n[[flows]]\nbytes = "10kB"\n',
     [("beta = 7", "cc.params.beta", "'cubic'; got 7"), ("cycle_start = 9", "flows[0].cc.params.cycle_start", "'bbr'; got 9"),
      ("md = 2", "flows[1].cc.params.md", "'scalable'; got 2")]),
    ("record-zero-throughput-interval", DUMBBELL + '[[flows]]\nbytes = "10kB"\n[record]\nthroughput_interval = "0s"\n',
     [('throughput_interval = "0s"', "record.throughput_interval", "must be at least 1ns; got '0s'; accepted: a value >= 1ns")]),
    ("record-packets-names", DUMBBELL + '[[flows]]\nname = "bulk"\n[[flows]]\nkind = "rpc"\nname = "web"\n'
     'request = "300B"\nresponse = "10kB"\narrivals = { process = "poisson", rate = 2.0 }\n'
     '[record]\nthroughput_interval = "100ms"\npackets = ["bulk", "bluk", "web"]\n',
     [("packets = [", "record.packets[1]", "unknown flow or group; got 'bluk'; accepted: \"*\", bulk. Did you mean 'bulk'?"),
      ("packets = [", "record.packets[2]", "an rpc application's packets are not traced; got 'web'")]),
    ("every-field-problem-at-once", DUMBBELL.replace('"2Mbps"', "2") + '[[flows]]\nbytes = 5\ncount = 0\n',
     [("rate = 2,", "topology.bottleneck.rate", "value without a unit"), ("bytes = 5", "flows[0].bytes",
                                                                          "value without a unit"),
      ("count = 0", "flows[0].count", "must be at least 1")]),
]


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _line_of(text: str, snippet: str) -> int:
    """The 1-based line of ``text`` that holds ``snippet`` (the only one)."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if snippet in line]
    assert len(found) == 1, (snippet, found)
    return found[0]


def _expect(file: Path, text: str, problems: list[tuple[str, str, str]], err: str) -> None:
    lines = _lines(err)
    assert len(lines) == len(problems), err
    for line, (snippet, field, words) in zip(lines, problems):
        n = _line_of(text, snippet)
        assert line.startswith(f"error: {file}:{n}: {field}: "), (line, n, field)
        assert words in line, (line, words)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name,text,problems", REFUSED, ids=[r[0] for r in REFUSED])
def test_check_and_run_refuse_the_same_with_every_problem_on_its_line(tmp_path: Path, capsys, name: str, text: str,
                                                                      problems: list[tuple[str, str, str]]) -> None:
    f = tmp_path / f"{name}.toml"
    f.write_text(text)
    out = tmp_path / "out"
    assert main(["check", str(f)]) == 2
    check = capsys.readouterr()
    assert check.out == ""
    _expect(f, text, problems, check.err)
    assert main(["run", str(f), "--out", str(out)]) == 2
    run = capsys.readouterr()
    assert (run.out, run.err) == ("", check.err) and not out.exists()


HUGE_SWEEP = DUMBBELL + '[[flows]]\nbytes = "10kB"\n[sweep]\nreplications = {reps}\n"tcp.iw" = [3, 10]\n'


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reps,words", [
    (100_000_000, "sweep.replications: must be at most 100000; got 100000000; accepted: a value in [1, 100000]"),
    (60_000, "sweep.replications: the sweep would run 120,000 runs (2 grid points x 60,000 replications); got 60000; "
             "accepted: at most 100,000 runs per sweep; split it into several experiments"),
])
def test_a_sweep_too_large_to_hold_is_refused_up_front_by_check_and_sweep(tmp_path: Path, capsys, reps: int,
                                                                         words: str) -> None:
    f = tmp_path / "huge.toml"
    f.write_text(HUGE_SWEEP.replace("{reps}", str(reps)))
    assert main(["check", str(f)]) == 2
    check = capsys.readouterr().err
    assert check == f"error: {f}:{_line_of(HUGE_SWEEP, 'replications')}: {words}\n"
    assert main(["sweep", str(f), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert capsys.readouterr().err == check and not (tmp_path / "out").exists()


@pytest.mark.timeout(30)
def test_a_fifo_is_refused_at_once_instead_of_blocking(tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "s.toml"
    os.mkfifo(fifo)
    for command in (["check"], ["run"], ["sweep"]):
        done: list[int] = []
        t = threading.Thread(target=lambda: done.append(main([*command, str(fifo)])), daemon=True)
        t.start()
        t.join(10)
        assert done == [2], f"{command[0]} blocked on a FIFO"
        assert capsys.readouterr().err == f"error: {fifo}: cannot read the file: it is a FIFO (named pipe), not a regular file\n"
    assert main(["check", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path}: cannot read the file: it is a directory, not a regular file\n"


@pytest.mark.timeout(60)
def test_a_byte_order_mark_is_accepted_and_lines_stay_true(tmp_path: Path, capsys) -> None:
    f = tmp_path / "bom.toml"
    f.write_bytes(b"\xef\xbb\xbf" + (DUMBBELL + '[[flows]]\nbytes = "10kB"\n').encode())
    assert main(["check", str(f)]) == 0 and capsys.readouterr().out == "ok\n"
    assert main(["run", str(f)]) == 0
    capsys.readouterr()
    f.write_bytes(b"\xef\xbb\xbf" + (DUMBBELL + '[[flows]]\nbytes = 5\n').encode())
    assert main(["check", str(f)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {f}:{_line_of(DUMBBELL, 'receiver_access') + 2}: flows[0].bytes: "
                                              "value without a unit")


SHARED = DUMBBELL.replace("pairs = 2", "pairs = 4") + '[[flows]]\ncount = 2\nbytes = "10kB"\n[[flows]]\nbytes = "10kB"\n'


@pytest.mark.timeout(60)
def test_entries_sharing_default_hosts_while_pairs_stay_idle_are_warned_by_check_and_run(tmp_path: Path, capsys) -> None:
    f = tmp_path / "shared.toml"
    f.write_text(SHARED)
    warning = (f"warning: {f}:{_line_of(SHARED, 'count = 2') + 2}: flows[1]: its flows take the default hosts from s0/d0 again, so they share s0/d0 "
               "with flows[0] while pairs 2, 3 carry no flow; set src and dst to spread them "
               '(e.g. src = "s2", dst = "d2")\n')
    assert main(["check", str(f)]) == 0
    assert capsys.readouterr() == ("ok\n", warning)
    assert main(["run", str(f)]) == 0
    assert capsys.readouterr().err == warning
    sc = Scenario.from_toml(SHARED)
    assert [(x["src"], x["dst"]) for x in sc.expand_flows()] == [("s0", "d0"), ("s1", "d1"), ("s0", "d0")]
    with pytest.warns(tcplab.ScenarioWarning, match="share s0/d0 with flows"):
        tcplab.run(sc)
    # Every pair in use: nothing to say (hspa_bursts.toml: two groups of 6 flows on 6 pairs).
    assert not Scenario.from_toml(SHARED.replace("pairs = 4", "pairs = 2")).warnings()


def _example_files() -> list[Path]:
    return [f for f in sorted(EXAMPLES.rglob("*.toml")) if f.name != "grid.toml"]


def test_every_example_resolves_its_default_hosts_as_before_without_a_warning() -> None:
    """Entry i's flow j without src/dst runs from s<j mod pairs> to d<j mod pairs>, each entry
    counting from s0 on its own (docs/scenarios.md, "Default hosts"): the examples, and the
    studies built on them, resolve exactly as they always have."""
    from tcplab.studies import studyfile
    from tcplab.sweeps import Experiment

    for f in _example_files():
        text = read_text(f)
        doc = parse_toml(text, str(f))
        if "claims" in doc:  # a study file: its first configuration's scenario
            sf = studyfile.load(f)
            sc = Scenario.model_validate(sf.scenario_doc(sf.configurations()[0]))
        else:
            sc = (Experiment.from_toml(text, str(f)).scenario(0) if "sweep" in doc else Scenario.from_toml(text, str(f)))
        assert sc.warnings() == [], f
        pairs = getattr(sc.topology, "pairs", None)
        flows = iter(sc.expand_flows(0))
        for entry in sc.flows:
            for j in range(entry.count):
                got = next(flows)
                src, dst = (got["server"], got["client"]) if got["kind"] == "rpc" else (got["src"], got["dst"])
                if entry.src is None:
                    assert src == f"s{j % pairs}", (f, got)
                if entry.dst is None:
                    assert dst == f"d{j % pairs}", (f, got)


# --------------------------------------------------------------------------------------
# Study files: every factor combination is checked before anything runs

#: A study whose factors are each valid alone; (old, new) below makes two of them clash.
STUDY = '''\
[scenario]
duration = "200ms"
warmup = "50ms"

[scenario.topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "2Mbps", delay = "20ms", queue = { kind = "drop_tail", limit = "48pkt" } }
sender_access = { rate = "100Mbps", delay = "1ms" }
receiver_access = { rate = "100Mbps", delay = "1ms" }

[[scenario.flows]]
bytes = "10kB"

[[factors]]
name = "cc"
path = "cc.name"
values = ["reno", "cubic"]

[[factors]]
name = "warmup"
path = "warmup"
values = ["50ms", "100ms"]

[[factors]]
name = "duration"
path = "duration"
values = ["200ms", "1s"]

[[metrics]]
name = "goodput"
table = "flows"
column = "goodput_bps"
'''

#: (name, (old, new), the factor whose line is reported, the combination named, words in the message).
CLASHES = [
    # warmup 300ms is valid with duration 1s, duration 200ms with warmup 50ms: not together
    # (the scenario's own rule, python/tcplab/scenario/model.py).
    ("warmup-after-duration", ('values = ["50ms", "100ms"]', 'values = ["50ms", "300ms"]'), "warmup",
     "configuration warmup=300ms, duration=200ms", "warmup: must be shorter than duration (200ms) (value from factor "
     "'warmup' = '300ms'); got '300ms'; accepted: a time below `duration`"),
    # FQ-CoDel's target must not exceed its interval (the simulator's own check, asked of the core).
    ("codel-target-over-interval", ('name = "warmup"\npath = "warmup"\nvalues = ["50ms", "100ms"]',
                                    'name = "target"\npath = "topology.bottleneck.queue.target"\n'
                                    'values = ["5ms", "200ms"]\n\n[[factors]]\nname = "interval"\n'
                                    'path = "topology.bottleneck.queue.interval"\nvalues = ["100ms", "500ms"]'),
     "target", "configuration target=200ms, interval=100ms",
     "topology.bottleneck.queue.target: must not exceed interval (100ms) (value from factor 'target' = '200ms'); "
     "got '200ms'"),
]


def _study(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "study.toml"
    f.write_text(text)
    return f


@pytest.mark.timeout(60)
def test_check_accepts_a_valid_study_file_and_the_example(tmp_path: Path, capsys) -> None:
    f = _study(tmp_path, STUDY)
    assert main(["check", str(f)]) == 0
    assert capsys.readouterr().out == "ok: 8 configurations x 10 replications\n"
    assert main(["check", str(EXAMPLES / "studies" / "fq-codel-fairness.toml")]) == 0
    assert capsys.readouterr().out == "ok: 8 configurations x 10 replications\n"
    assert main(["check", str(f), "--json"]) == 0
    configs = json.loads(capsys.readouterr().out)
    assert [c["configuration"] for c in configs][-1] == {"cc": "cubic", "warmup": "100ms", "duration": "1s"}
    assert configs[-1]["scenario"]["warmup"] == 100_000_000 and configs[-1]["scenario"]["duration"] == 10**9


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name,edit,factor,combination,words", CLASHES, ids=[c[0] for c in CLASHES])
def test_check_names_the_factor_combination_a_study_cannot_run_before_anything_runs(
        tmp_path: Path, capsys, name: str, edit: tuple[str, str], factor: str, combination: str, words: str) -> None:
    text = STUDY.replace(*edit)
    assert text != STUDY
    if name.startswith("codel"):  # the queue the target belongs to
        text = text.replace('queue = { kind = "drop_tail", limit = "48pkt" }', 'queue = { kind = "fq_codel" }')
    f = _study(tmp_path, text)
    assert main(["check", str(f)]) == 2
    check = capsys.readouterr()
    assert check.out == ""
    values_line = _line_of(text, f'name = "{factor}"') + 2  # name, path, values
    assert text.splitlines()[values_line - 1].startswith("values = ")
    # One problem, once, naming the two factors' values and not the factor that does not matter.
    assert len(_lines(check.err)) == 1, check.err
    assert check.err.startswith(f"error: {f}:{values_line}: {combination}: {words}"), check.err
    out = tmp_path / "out"
    assert main(["study", "run", str(f), "--out", str(out), "--no-progress"]) == 2
    assert capsys.readouterr().err == check.err
    assert not out.exists()


def test_a_problem_of_every_configuration_is_reported_once_without_a_combination(tmp_path: Path, capsys) -> None:
    text = STUDY.replace('bytes = "10kB"', 'bytes = "10kB"\nstart = "1s"\nstop = "500ms"')
    f = _study(tmp_path, text)
    assert main(["check", str(f)]) == 2
    err = capsys.readouterr().err
    n = _line_of(text, 'stop = "500ms"')
    assert _lines(err) == [f"error: {f}:{n}: scenario.flows[0].stop: must come after start; otherwise the flow would "
                           "send nothing; got '500ms'; accepted: a time after 1s, or no stop"], err


# --------------------------------------------------------------------------------------
# The Python builders


def test_python_builders_have_the_files_rules() -> None:
    with pytest.raises(ScenarioError) as e:
        tcplab.Link(rate="2Mbps", delay=30)
    assert str(e.value) == "delay: value without a unit; a time is written with its unit; got 30; accepted: a string like '70ms'"
    with pytest.raises(ScenarioError) as e:
        tcplab.TcpOptions(iw=3.5)
    assert str(e.value).startswith("iw: the initial window must be a whole number of segments; got 3.5")
    with pytest.raises(ScenarioError, match="must not exceed interval"):
        tcplab.FqCodel(target="200ms", interval="100ms")
    with pytest.raises(ScenarioError, match="must come after start"):
        tcplab.TcpFlow(start="2s", stop="1s")
    for name in ("FqCodel", "Codel", "Pie", "ParkingLot", "RpcFlow", "Workload", "Dama", "Slacp"):
        assert getattr(tcplab, name) is getattr(tcplab.scenario, name)


@pytest.mark.timeout(60)
def test_run_takes_one_trace_name_and_refuses_a_non_scenario_in_one_line() -> None:
    sc = Scenario.from_toml(EXAMPLE_TOML)
    r = tcplab.run(sc, trace="cwnd")
    assert len(r.series["cwnd"]) > 0
    for bad in (42, None, ["x.toml"]):
        with pytest.raises(ScenarioError) as e:
            tcplab.run(bad)  # type: ignore[arg-type]
        assert "\n" not in str(e.value) and str(e.value).startswith("expected a Scenario or the path of a scenario file")
    with pytest.raises(ScenarioError, match="trace: unknown time series; got 'cwdn'.*Did you mean 'cwnd'"):
        tcplab.run(sc, trace="cwdn")


@pytest.mark.timeout(60)
def test_a_scenario_built_in_python_is_checked_by_the_core_before_it_runs() -> None:
    sc = Scenario.from_toml(EXAMPLE_TOML)
    sc.cc = tcplab.CcOptions(name="cubic", params={"beta": 7})
    with pytest.raises(ScenarioError) as e:
        tcplab.run(sc)
    assert str(e.value) == "cc.params.beta: not accepted by congestion control 'cubic'; got 7; accepted: 0 < beta < 1"


# --------------------------------------------------------------------------------------
# check and run never disagree


_WILD = st.one_of(
    st.integers(-2, 10), st.sampled_from([0, 1, 7, 100_000, 2**40]), st.floats(-1, 10, allow_nan=False),
    st.booleans(),
    st.sampled_from(["0s", "1ms", "50ms", "1s", "-1s", "0B", "1B", "10kB", "1pkt", "0pkt", "1Mbps", "0bps", "s0", "d9",
                     "x", "reno", "cubic", "bbr", "drop_tail", "fq_codel", "codel", "red", "rfc3390", ""]),
)
_QUANTITY = re.compile(r"^([0-9.]+)\s*([A-Za-z/µ]+)$")


def _near(old: object) -> st.SearchStrategy:
    """A value like ``old``: the same unit or type, another magnitude (often still valid)."""
    if isinstance(old, bool):
        return st.booleans()
    if isinstance(old, int):
        return st.integers(-1, 2 * abs(old) + 2)
    if isinstance(old, float):
        return st.floats(-0.5, 2 * abs(old) + 1, allow_nan=False)
    if isinstance(old, str):
        m = _QUANTITY.match(old)
        if m:
            top = int(3 * float(m.group(1)) + 1)
            return st.integers(0, top).map(lambda x: f"{x}{m.group(2)}")
        return st.one_of(st.just(old), st.text(alphabet="abrsd0123_", max_size=4))
    return _WILD


def _leaves(node: object, path: tuple = ()) -> list[tuple]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _leaves(v, (*path, k))] + [path] * bool(path)
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _leaves(v, (*path, i))] + [path] * bool(path)
    return [path]


def _get(doc: dict, path: tuple) -> object:
    node: object = doc
    for part in path:
        node = node[part]  # type: ignore[index]
    return node


def _set(doc: dict, path: tuple, value: object) -> None:
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


_SHORT = {"duration": "300ms", "max_duration": "300ms"}


@st.composite
def mutated_examples(draw: st.DrawFn) -> tuple[str, str]:
    import tomli_w

    f = draw(st.sampled_from([f for f in _example_files() if "sweep" not in f.read_text()
                              and "[[factors]]" not in f.read_text()]))  # `run` takes scenario files only
    doc = parse_toml(read_text(f), str(f))
    doc.pop("warmup", None)
    doc.update(_SHORT)  # a short run: a file that is accepted must also run, quickly
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        leaves = [p for p in _leaves(doc) if p and p[0] not in _SHORT]
        scalars = [p for p in leaves if not isinstance(_get(doc, p), (dict, list))]
        path = draw(st.sampled_from(scalars if draw(st.integers(0, 9)) else leaves))
        old = _get(doc, path)
        _set(doc, path, draw(st.one_of(_near(old), _WILD) if draw(st.booleans()) else _near(old)))
    return f.name, tomli_w.dumps(doc)


@pytest.mark.timeout(300)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(mutated_examples())
def test_check_and_run_agree_on_mutated_examples(tmp_path: Path, capsys, case: tuple[str, str]) -> None:
    name, text = case
    f = tmp_path / name
    f.write_text(text)
    checked = main(["check", str(f)])
    check = capsys.readouterr()
    ran = main(["run", str(f)])
    run = capsys.readouterr()
    if checked == 2:
        assert ran == 2 and run.out == "" and run.err == check.err, (text, check.err, run.err)
        for line in _lines(check.err):  # one line per problem, each naming the file
            assert re.match(rf"error: {re.escape(str(f))}(:\d+)?: ", line), line
    else:
        assert checked == 0 and check.out == "ok\n", (text, check)
        assert ran == 0, (text, run.err)
