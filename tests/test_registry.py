"""The Rust registry as seen from Python: names, profiles and resolution errors."""

import json

import pytest

from tcplab import _core


def test_registry_lists_reno_and_profiles() -> None:
    reg = json.loads(_core.registry_json())
    names = [c["name"] for c in reg["congestion_controls"]]
    assert "reno" in names
    profiles = {p["name"]: p["config"] for p in reg["tcp_profiles"]}
    assert set(profiles) >= {"linux", "ns2-sack", "reference", "enhanced"}
    # Linux profile: IW10, initial RTO 1 s, minimum RTO 200 ms (in ns).
    assert profiles["linux"]["iw"] == 10
    assert profiles["linux"]["initial_rto"] == 1_000_000_000
    assert profiles["linux"]["min_rto"] == 200_000_000


def test_resolve_tcp_applies_overrides_and_rejects_bad_values() -> None:
    cfg = json.loads(_core.resolve_tcp(json.dumps({"profile": "ns2-sack", "iw": 10})))
    assert cfg["iw"] == 10 and cfg["sack"] is True and cfg["delayed_ack"] is False
    with pytest.raises(ValueError, match="tcp.iw"):
        _core.resolve_tcp(json.dumps({"iw": 0}))
    with pytest.raises(ValueError, match="unknown field"):
        _core.resolve_tcp(json.dumps({"iww": 3}))
