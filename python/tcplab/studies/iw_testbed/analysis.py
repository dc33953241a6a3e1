"""Derived per-run columns and the summary table of the ``iw-testbed`` study (seed 001).

The per-run metrics are measured in :func:`tcplab.studies.iw_testbed.study.run_metrics_of`;
this module derives the shares the seed's "dominated by" sentences talk about
(``docs/seeds/001_ac085380cef1778f.txt``, "Average User Completion Time" and "UCT for
Higher Load Slow Links") and summarises every configuration for the report.

A run's UCT splits into the idle testbed's UCT (round trips and serialization, no
queue: ``uct_idle_s``) and the rest (queueing and losses). With ``T`` the serialization
of one 15 kB response at the bottleneck rate (1.95 s at 64 kbit/s, 6.2 ms at
20 Mbit/s):

- ``serial_share = T / UCT``: the part of the mean UCT that is the response's
  serialization;
- ``rtt_share = (uct_idle - T) / UCT``: the part that is the idle transfer's round
  trips (the handshake and the slow-start rounds);
- ``queue_share = (UCT - uct_idle) / UCT``: the part that is neither, i.e. queueing
  (and the losses it causes).

Example:
    >>> runs = pd.DataFrame({"link": ["64k", "20m"], "uct_mean_s": [3.9, 1.25], "uct_idle_s": [2.59, 1.2],
    ...                      "uct_p99_s": [9.0, 2.5], "uct_p50_s": [3.0, 1.25], "iw": ["iw3", "iw10"],
    ...                      "sack": [True, False]})
    >>> d = derived(runs)
    >>> [round(x, 3) for x in d["serial_share"]], [round(x, 3) for x in d["queue_share"]], d["tcp"].tolist()
    ([0.499, 0.005], [0.336, 0.04], ['iw3/sack', 'iw10/nosack'])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tcplab import stats
from tcplab.studies.iw_testbed.testbed import LINKS

__all__ = ["derived", "summary_table"]


def derived(runs: pd.DataFrame) -> pd.DataFrame:
    """A copy of the per-run table with ``tcp`` (``<iw>/<sack|nosack>``), the UCT shares
    (module doc) and ``tail_ratio`` (p99 over median UCT)."""
    r = runs.copy()
    r["tcp"] = r["iw"].astype(str) + "/" + np.where(r["sack"].astype(bool), "sack", "nosack")
    serial = r["link"].map(lambda l: LINKS[l].response_time_s()).astype(float)
    uct = r["uct_mean_s"].astype(float)
    r["serial_share"] = serial / uct
    r["rtt_share"] = (r["uct_idle_s"].astype(float) - serial) / uct
    r["queue_share"] = (uct - r["uct_idle_s"].astype(float)) / uct
    r["tail_ratio"] = r["uct_p99_s"].astype(float) / r["uct_p50_s"].astype(float)
    return r


def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and TCP variant: means over replications with 95 % half-widths."""
    rows = []
    cols = (("uct_mean_s", "UCT mean (s)"), ("uct_p50_s", "UCT p50 (s)"), ("uct_p99_s", "UCT p99 (s)"),
            ("plr", "PLR"), ("busy_fraction", "qlen>0 share"), ("occ_mean_pkts", "mean queue (pkts)"),
            ("bg_goodput_bps", "bg goodput (bit/s)"), ("retx_per_txn", "rexmit/txn"), ("n_txn", "txns/run"))
    for key, part in runs.groupby(["link", "load", "opens", "bg", "iw", "sack"], sort=False):
        link, load, opens, bg, iw, sack = key
        row: dict[str, Any] = {"link": link, "load": load, "opens": int(opens), "bg": bool(bg), "iw": iw,
                               "sack": bool(sack), "reps": len(part),
                               "unfinished": int((part["n_txn"] - part["n_finished"]).sum())}
        for col, name in cols:
            v = part[col].replace([np.inf], np.nan)
            if v.isna().all():
                continue
            est = stats.mean_ci(v.dropna().to_numpy(float))
            row[name] = est.value
            row[name + " ±"] = (est.high - est.value) if est.n >= 2 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)
