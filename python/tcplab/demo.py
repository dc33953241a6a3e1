"""The `make demo` job until the iw-irto study lands: one bundled scenario from seed 000.

HSPA bottleneck (2 Mbit/s, 70 ms one-way), senders 11 ms from the router, a FIFO of
2·BDP = 48 packets, and two bursts of two 45 kB flows (IW10, initial RTO 1 s, the
``ns2-sack`` profile), the second burst 0.5 s after the first. Prints the per-flow
table.

Example:
    $ python -m tcplab.demo
"""

from __future__ import annotations

import json
import math

from tcplab import _core

MS = 1_000_000

#: The demo scenario in the core's resolved form (bit/s, ns, bytes).
DEMO_SCENARIO: dict = {
    "name": "demo-hspa-2+2-iw10",
    "topology": {
        "kind": "dumbbell",
        "pairs": 4,
        "bottleneck": {
            "rate": 2_000_000,
            "delay": 70 * MS,
            "queue": {"kind": "drop_tail", "limit": {"packets": 48}, "count_in_service": True},
        },
        "sender_access": {"rate": 100_000_000, "delay": 11 * MS},
        "receiver_access": {"rate": 100_000_000, "delay": 0},
    },
    "flows": [
        {
            "kind": "tcp",
            "name": f"b{burst}f{i}",
            "group": f"burst{burst}",
            "src": f"s{2 * (burst - 1) + i}",
            "dst": f"d{2 * (burst - 1) + i}",
            "start": (burst - 1) * 500 * MS,
            "bytes": 45_000,
            "tcp": {"profile": "ns2-sack", "iw": 10, "initial_rto": 1000 * MS},
        }
        for burst in (1, 2)
        for i in range(2)
    ],
}


def main() -> int:
    """Runs the demo scenario and prints its per-flow table; returns the exit code."""
    from rich.console import Console
    from rich.table import Table

    result = json.loads(_core.run(json.dumps(DEMO_SCENARIO), 1))
    flows = result["flows"]
    table = Table(title=f"{DEMO_SCENARIO['name']} (seed 1, digest {result['meta']['digest']})")
    for col in ("flow", "group", "start (s)", "elapsed (s)", "goodput (kbit/s)", "retx", "RTOs", "spurious"):
        table.add_column(col, justify="right")
    for i in range(len(flows["flow_id"])):
        elapsed = flows["elapsed_s"][i]
        table.add_row(
            flows["name"][i],
            flows["group"][i],
            f"{flows['start_s'][i]:.3f}",
            "-" if elapsed is None or math.isnan(elapsed) else f"{elapsed:.3f}",
            f"{flows['goodput_bps'][i] / 1e3:.1f}",
            str(flows["retransmits"][i]),
            str(flows["rtos"][i]),
            str(flows["spurious_rtos"][i]),
        )
    Console().print(table)
    meta = result["meta"]
    print(f"simulated {meta['sim_end_s']:.3f} s, {meta['events']} events, {meta['drops']} drops")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
