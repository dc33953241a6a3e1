"""Scenario fields of the satellite layers (seed 004, docs/studies/satellite.md): a link's DAMA `mac` and SLACP
`link_layer`. Every field's bad value is one located error (file, line, path, value,
what is accepted), impossible combinations are refused before anything runs, and a
valid file reaches the core and runs."""

import pytest

from tcplab import runner
from tcplab.scenario import Dama, Scenario, ScenarioError, Slacp, SlacpChannel

BASE = """\
name = "geo"
[topology]
kind = "graph"
nodes = ["st", "gw"]
[[topology.links]]
name = "return"
from = "st"
to = "gw"
rate = "128kbps"
delay = "250ms"
queue = { kind = "drop_tail", limit = "14.4kB" }
mac = { kind = "dama", mode = "rbdc", rbdc_timeout = "318ms" }
[topology.links.link_layer]
kind = "slacp"
persistence = 3
ack_timer = "200ms"
map = { voice = "rt" }
[[topology.links.link_layer.channels]]
name = "bulk"
priority = 1
[[topology.links.link_layer.channels]]
name = "rt"
arq = false
fec = false
[[topology.links]]
name = "forward"
from = "gw"
to = "st"
rate = "512kbps"
delay = "250ms"

[tcp]
profile = "enhanced"
mss = "1410B"

[[flows]]
name = "bulk"
src = "st"
dst = "gw"
bytes = "50kB"

[[flows]]
kind = "udp"
name = "voice"
src = "st"
dst = "gw"
packet_size = "186B"
stop = "2s"
interval = { dist = "constant", mean = "20ms" }
"""

L = "topology.links[0]"
MAC = 'mac = { kind = "dama", mode = "rbdc", rbdc_timeout = "318ms" }'


def error_of(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text, "sat.toml")
    return info.value


@pytest.mark.parametrize(
    "edit, path, line, fragments",
    [
        # DAMA
        ((MAC, 'mac = { kind = "tdma", mode = "rbdc" }'), f"{L}.mac.kind", 12, ["Did you mean 'dama'"]),
        ((MAC, 'mac = { kind = "dama", mode = "dbdc" }'), f"{L}.mac.mode", 12, ["'dbdc'", "cra, rbdc, vbdc"]),
        ((MAC, 'mac = { kind = "dama", mode = "rbdc", superframe = 26 }'), f"{L}.mac.superframe", 12,
         ["without a unit", "'70ms'"]),
        ((MAC, 'mac = { kind = "dama", mode = "rbdc", superframe = "0s" }'), f"{L}.mac.superframe", 12,
         ["at least 1ns"]),
        ((MAC, 'mac = { kind = "dama", mode = "rbdc", superframe = "2ms" }'), f"{L}.mac.superframe", 12,
         ["shorter than one slot", "3312.5us", "'2ms'"]),
        ((MAC, 'mac = { kind = "dama", mode = "rbdc", slot_size = "0B" }'), f"{L}.mac.slot_size", 12,
         ["in [1B, 65535B]"]),
        ((MAC, 'mac = { kind = "dama", mode = "cra", allocation_delay = "500ms" }'), f"{L}.mac.allocation_delay", 12,
         ["applies to mode 'rbdc' and 'vbdc' only, not 'cra'", "'500ms'"]),
        ((MAC, 'mac = { kind = "dama", mode = "vbdc", allocation_delay = "0s" }'), f"{L}.mac.allocation_delay", 12,
         ["at least 1ns"]),
        ((MAC, 'mac = { kind = "dama", mode = "vbdc", cra_rate = "64kbps" }'), f"{L}.mac.cra_rate", 12,
         ["applies to mode 'cra' only, not 'vbdc'", "'64kbps'"]),
        ((MAC, 'mac = { kind = "dama", mode = "cra", cra_rate = "200kbps" }'), f"{L}.mac.cra_rate", 12,
         ["exceeds what the slot grid carries", "8 slots of 53B", "at most 128kbps"]),
        ((MAC, 'mac = { kind = "dama", mode = "rbdc", rbdc_max = "1Mbps" }'), f"{L}.mac.rbdc_max", 12,
         ["exceeds what the slot grid carries", "'1Mbps'"]),
        ((MAC, 'mac = { kind = "dama", mode = "rbdc", rbdc_max = "0bps" }'), f"{L}.mac.rbdc_max", 12,
         ["at least 1bps"]),
        ((MAC, 'mac = { kind = "dama", mode = "vbdc", rbdc_timeout = "1s" }'), f"{L}.mac.rbdc_timeout", 12,
         ["applies to mode 'rbdc' only, not 'vbdc'"]),
        ((MAC, 'mac = { kind = "dama", mode = "rbdc", rbdc_timeout = "0s" }'), f"{L}.mac.rbdc_timeout", 12,
         ["at least 1ns"]),
        # SLACP
        (('kind = "slacp"', 'kind = "slap"'), f"{L}.link_layer.kind", 14, ["Did you mean 'slacp'"]),
        (("persistence = 3", "persistence = -1"), f"{L}.link_layer.persistence", 15, ["in [0, 1000]", "-1"]),
        (("persistence = 3", "persistence = 1001"), f"{L}.link_layer.persistence", 15, ["in [0, 1000]"]),
        (('ack_timer = "200ms"', 'ack_timer = "0s"'), f"{L}.link_layer.ack_timer", 16, ["at least 1ns"]),
        (('ack_timer = "200ms"', "ack_timer = 200"), f"{L}.link_layer.ack_timer", 16, ["without a unit"]),
        (('ack_timer = "200ms"', "ack_repeats = 5000"), f"{L}.link_layer.ack_repeats", 16, ["in [0, 1000]"]),
        (('ack_timer = "200ms"', "fec_ratio = 0.0"), f"{L}.link_layer.fec_ratio", 16, ["in [0.01, 8]"]),
        (('ack_timer = "200ms"', "fec_max_block = 0"), f"{L}.link_layer.fec_max_block", 16, ["in [1, 128]"]),
        (('ack_timer = "200ms"', 'header_size = "100B"'), f"{L}.link_layer.header_size", 16, ["in [0B, 64B]"]),
        (('ack_timer = "200ms"', 'ack_size = "0B"'), f"{L}.link_layer.ack_size", 16, ["in [1B, 1500B]"]),
        (('ack_timer = "200ms"', 'mac_buffer = "1kB"'), f"{L}.link_layer.mac_buffer", 16,
         ["cannot hold the largest frame (1454 B: a 1450 B packet and a 4 B header)", "'1kB'", "at least 1454B"]),
        (('map = { voice = "rt" }', 'map = { voice = "realtime" }'), f"{L}.link_layer.map.voice", 17,
         ["unknown channel", "'realtime'", "bulk, rt"]),
        (('map = { voice = "rt" }', 'map = { vioce = "rt" }'), f"{L}.link_layer.map.vioce", 17,
         ["unknown flow or group", "Did you mean 'voice'"]),
        (('name = "rt"\narq = false\nfec = false', 'name = "rt"\narq = false'), f"{L}.link_layer.channels[1].fec", 21,
         ["needs arq = true", "false when arq = false"]),
        (('name = "rt"\narq', 'name = "bulk"\narq'), f"{L}.link_layer.channels[1].name", 22, ["duplicate channel name"]),
        (("priority = 1", "priority = 300"), f"{L}.link_layer.channels[0].priority", 20, ["in [0, 255]"]),
        (('name = "bulk"\npriority = 1', 'nme = "bulk"'), f"{L}.link_layer.channels[0].nme", 19,
         ["unknown field", "Did you mean 'name'"]),
    ],
)
def test_each_bad_value_is_one_located_error(edit, path: str, line: int, fragments: list[str]) -> None:
    assert edit[0] in BASE
    e = error_of(BASE.replace(*edit))
    assert (e.file, e.line, e.path) == ("sat.toml", line, path), str(e)
    for frag in fragments:
        assert frag in str(e), str(e)


def test_a_link_layer_needs_a_reverse_link_for_its_acks() -> None:
    one_way = BASE[: BASE.index("[[topology.links]]\nname = \"forward\"")] + BASE[BASE.index("\n[tcp]"):]
    e = error_of(one_way)
    assert e.path == f"{L}.link_layer" and e.line == 13, str(e)
    assert "needs a reverse link from 'gw' to 'st' to carry its ACKs" in str(e)


def test_the_file_reaches_the_core_and_runs() -> None:
    sc = Scenario.from_toml(BASE, "sat.toml")
    core = sc.to_core()
    ret = core["topology"]["links"][0]
    assert ret["mac"] == {"kind": "dama", "mode": "rbdc", "superframe": 26_500_000, "slot_bytes": 53,
                          "allocation_delay": None, "cra_rate": None, "rbdc_max": None, "rbdc_timeout": 318_000_000}
    assert ret["link_layer"]["map"] == {"voice": "rt"}
    assert [c["name"] for c in ret["link_layer"]["channels"]] == ["bulk", "rt"]
    assert "mac" not in core["topology"]["links"][1]
    result = runner.run(sc, seed=1)
    links = result.links.set_index("link")
    assert links.loc["return", "mac"] == "dama/rbdc" and links.loc["return", "ll"] == "slacp"
    assert result.flows.loc[0, "bytes_delivered"] == 50_000
    assert result.udp.loc[0, "pkts_delivered"] == result.udp.loc[0, "pkts_sent"] == 100
    # Round trip through TOML keeps every field.
    assert Scenario.from_toml(sc.to_toml()).to_core() == core


def test_group_names_in_the_map_expand_to_flows() -> None:
    text = BASE.replace('name = "voice"\n', 'name = "voice"\ncount = 3\n')
    core = Scenario.from_toml(text).to_core()
    assert core["topology"]["links"][0]["link_layer"]["map"] == {"voice.0": "rt", "voice.1": "rt", "voice.2": "rt"}


def test_python_builders_check_the_same_rules() -> None:
    assert Dama(mode="vbdc").to_core()["mode"] == "vbdc"
    with pytest.raises(ScenarioError, match="applies to mode 'cra' only"):
        Dama(mode="rbdc", cra_rate="64kbps")
    with pytest.raises(ScenarioError, match="needs arq = true"):
        SlacpChannel(name="x", arq=False)
    with pytest.raises(ScenarioError, match="unknown channel"):
        Slacp(map={"a": "b"})
    assert Slacp().to_core()["channels"] == [{"name": "default", "priority": 0, "arq": True, "fec": True}]
