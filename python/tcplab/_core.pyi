"""Type stubs of the compiled core (crates/tcplab-py/src/lib.rs)."""

def version() -> str:
    """The tcplab-core version."""

def registry_json() -> str:
    """Congestion controls, TCP profiles, queues and error models, as JSON."""

def resolve_tcp(spec_json: str) -> str:
    """A TCP spec (profile + overrides, JSON) resolved into the full configuration; ValueError names the bad field."""

def run(scenario_json: str, seed: int) -> str:
    """Runs one resolved scenario (scenario.rs schema) with the GIL released; returns the results document (JSON)."""

def bench_scenarios() -> list[str]:
    """The standard benchmark rows, in the order `tcplab bench` runs them."""

def bench_large_scenarios() -> list[str]:
    """Benchmark rows run only on request (`tcplab bench --large`)."""

def bench_check(name: str) -> None:
    """Raises ValueError, naming what is accepted, unless `name` is a benchmark scenario."""

def bench(name: str) -> str:
    """Runs one benchmark scenario; returns one JSON object (see `tcplab bench --help` for its keys)."""
