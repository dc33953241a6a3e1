"""The Rust registry (``tcplab._core.registry_json``), read once and cached.

Everything selectable by name (congestion controls and their parameters, TCP profiles
with their full configurations, queue disciplines, error models) comes from the core,
so the validator, ``tcplab list`` and ``docs/scenarios.md`` never keep a hand-made
copy (registry.rs).

Example:
    >>> "reno" in cc_names() and "linux" in profile_names()
    True
    >>> profile_config("linux")["iw"]
    10
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from tcplab import _core

__all__ = [
    "registry",
    "cc_names",
    "cc_entry",
    "profile_names",
    "profile_config",
    "queue_names",
    "error_model_names",
]


@lru_cache(maxsize=1)
def registry() -> dict[str, Any]:
    """The whole registry document as a dict (see registry.rs for its shape).

    Example:
        >>> sorted(registry())
        ['congestion_controls', 'error_models', 'link_layers', 'link_presets', 'macs', 'queues', 'tcp_profiles']
    """
    doc: dict[str, Any] = json.loads(_core.registry_json())
    return doc


def cc_names() -> list[str]:
    """Registered congestion-control names, in registry order.

    Example:
        >>> cc_names()[0]
        'reno'
    """
    return [c["name"] for c in registry()["congestion_controls"]]


def cc_entry(name: str) -> dict[str, Any]:
    """One congestion control's entry: name, summary, reference, params.

    Example:
        >>> cc_entry("reno")["params"]
        []
    """
    for c in registry()["congestion_controls"]:
        if c["name"] == name:
            entry: dict[str, Any] = c
            return entry
    raise KeyError(name)


def profile_names() -> list[str]:
    """TCP profile names, in registry order.

    Example:
        >>> profile_names()[:2]
        ['linux', 'ns2-sack']
    """
    return [p["name"] for p in registry()["tcp_profiles"]]


def profile_config(name: str) -> dict[str, Any]:
    """A profile's full TCP configuration (core units: bytes, nanoseconds).

    Example:
        >>> profile_config("ns2-sack")["initial_rto"]
        3000000000
    """
    for p in registry()["tcp_profiles"]:
        if p["name"] == name:
            cfg: dict[str, Any] = p["config"]
            return cfg
    raise KeyError(name)


def queue_names() -> list[str]:
    """Queue discipline kinds the core accepts.

    Example:
        >>> "drop_tail" in queue_names()
        True
    """
    return [q["name"] for q in registry()["queues"]]


def error_model_names() -> list[str]:
    """Error model kinds the core accepts.

    Example:
        >>> "bernoulli" in error_model_names()
        True
    """
    return [e["name"] for e in registry()["error_models"]]


def link_presets() -> dict[str, dict[str, Any]]:
    """Link presets by name: rate (bit/s) and one-way delay (ns, or None if open).

    Example:
        >>> link_presets()["hspa"]["rate"], link_presets()["hspa"]["delay"]
        (2000000, 70000000)
    """
    return {p["name"]: p for p in registry().get("link_presets", [])}

