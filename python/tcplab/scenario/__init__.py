"""Scenarios: the TOML file format, its Python API and its validation.

A scenario describes one experiment: a topology (the dumbbell builder or an explicit
graph of nodes and unidirectional links, each with a queue and an error model), the
default TCP settings (``[tcp]``: a profile plus per-knob overrides) and congestion
control (``[cc]``), the flows (``[[flows]]``; a ``count`` turns an entry into a flow
group spread over the sender/receiver pairs) and what to record (``[record]``).

This package implements the user-facing half of the scenario-file contract
(docs/scenarios.md): quantities carry units (:mod:`tcplab.units`), every field has a documented
default, and an unknown field, a missing unit or an impossible value is one
:class:`ScenarioError` naming the file, the line, the field, the value given and what
is accepted, with a "did you mean" for near misses, before anything runs.
:meth:`Scenario.to_core` produces the resolved JSON schema of the core
(``crates/tcplab-core/src/scenario.rs``): plain integers in bit/s, nanoseconds and
bytes, enums tagged by ``kind``.

Every table is a pydantic v2 model; one declaration per field (type, range, default,
description) feeds validation, the TOML writer, the reference ``docs/scenarios.md``
and the JSON Schema for editors. Modules:

- :mod:`.quantities`: rate, time, size, packet and limit types around :mod:`tcplab.units`;
- :mod:`.network`: queues, error models, links, topologies;
- :mod:`.tcp`: ``[tcp]`` and ``[cc]``; :mod:`.flows`: ``[[flows]]``; :mod:`.record`;
- :mod:`.workload`: ``[workload]``, flow classes drawn from the run seed (parking lot);
- :mod:`.model`: :class:`Scenario` and its cross-table checks;
- :mod:`.experiment`: the ``[sweep]`` table;
- :mod:`.errors`: :class:`ScenarioError` and the translation of pydantic's errors;
- :mod:`.locate`: file reading and :class:`TomlLocator` (field path -> line);
- :mod:`.reference` and :mod:`.schema`: the generated documentation and JSON Schema.

Example:
    >>> sc = Scenario.from_toml('''
    ... name = "hspa"
    ... [topology]
    ... kind = "dumbbell"
    ... bottleneck = { rate = "2Mbps", delay = "70ms", queue = { kind = "drop_tail", limit = "48pkt" } }
    ... sender_access = { rate = "100Mbps", delay = "11ms" }
    ... receiver_access = { rate = "100Mbps", delay = "1ms" }
    ... [tcp]
    ... profile = "ns2-sack"
    ... [[flows]]
    ... bytes = "180kB"
    ... ''')
    >>> core = sc.to_core()
    >>> core["topology"]["bottleneck"]["rate"], core["flows"][0]["bytes"]
    (2000000, 180000)
    >>> Scenario.from_toml(sc.to_toml()) == sc
    True
"""

from tcplab.scenario.errors import ScenarioError
from tcplab.scenario.experiment import SweepTable
from tcplab.scenario.flows import Arrivals, Flow, Interval, RpcFlow, SizeDist, TcpFlow, UdpFlow
from tcplab.scenario.locate import TomlLocator, located, parse_toml, read_text
from tcplab.scenario.model import EXAMPLE_TOML, Scenario, load
from tcplab.scenario.network import (
    Access,
    Bernoulli,
    Codel,
    Dama,
    DropTail,
    Dumbbell,
    ErrorSpec,
    FqCodel,
    Graph,
    GraphLink,
    Link,
    LotHost,
    Markov,
    ParkingLot,
    Pie,
    QueueSpec,
    Red,
    Slacp,
    SlacpChannel,
    Topology,
)
from tcplab.scenario.record import Record
from tcplab.scenario.reference import reference_markdown
from tcplab.scenario.schema import json_schema, json_schema_text, study_json_schema, study_json_schema_text
from tcplab.scenario.tcp import CcOptions, TcpOptions
from tcplab.scenario.workload import FlowClass, Workload

__all__ = [
    "ScenarioError",
    "DropTail",
    "Red",
    "Codel",
    "FqCodel",
    "Pie",
    "Bernoulli",
    "Markov",
    "Dama",
    "Slacp",
    "SlacpChannel",
    "QueueSpec",
    "ErrorSpec",
    "Link",
    "Access",
    "Dumbbell",
    "GraphLink",
    "Graph",
    "LotHost",
    "ParkingLot",
    "Topology",
    "FlowClass",
    "Workload",
    "TcpOptions",
    "CcOptions",
    "Interval",
    "TcpFlow",
    "UdpFlow",
    "SizeDist",
    "Arrivals",
    "RpcFlow",
    "Flow",
    "Record",
    "Scenario",
    "SweepTable",
    "TomlLocator",
    "EXAMPLE_TOML",
    "load",
    "located",
    "parse_toml",
    "read_text",
    "reference_markdown",
    "json_schema",
    "json_schema_text",
    "study_json_schema",
    "study_json_schema_text",
]
