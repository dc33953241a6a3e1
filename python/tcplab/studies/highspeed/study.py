"""Study ``highspeed``: seed 002 end to end (issue 11).

Seed 002 is H. Shimonishi, T. Murase and M. Sanadidi, "Assessing interactions among
legacy and high-speed TCPs", PFLDnet 2007 (``shared/seeds/002_06d48414b99b3466.txt``):
eight congestion controls (Reno, HighSpeed, Scalable, BIC, CUBIC, H-TCP, Compound,
AReno) compared flow by flow on a 5-router parking lot full of short flows, alone and
mixed with Reno.

What runs (``docs/studies/highspeed.md`` explains every choice the seed leaves open):

- **One scenario file**, ``examples/highspeed/parking_lot.toml`` (the seed's full
  scale), swept by path (:func:`variant_document`): ``cc.name`` (the protocol),
  ``workload.classes[*].mix_fraction`` (0, or :data:`MIX_FRACTION` of the long- and
  short-lived flows on Reno), ``workload.classes[0].count`` (10 or 40 long-lived flows),
  ``topology.backbone.error`` (Bernoulli loss or none) and the scale.
- **Grid** (:meth:`StudyParams.configurations`): per load/loss case, the all-Reno
  baseline plus each of the 7 other protocols alone and mixed. The seed runs random
  loss with 10 long-lived flows only ("With/without random packet losses - 10 long-lived
  flows, 100 short-lived flows"), so the cases are (10, no loss), (40, no loss),
  (10, loss): 3 x 15 = 45 runs per replication.
- **Scale** (:data:`SCALES`): ``full`` is the seed's (1 Gbit/s, 2 MB buffers, 4.7 GB
  flows); ``reduced`` (the default) divides every rate, buffer, flow size and the
  receive buffer by 10 and multiplies the random-loss rate by 100 (= 10^2, so Reno's
  loss-limited window 1.22/sqrt(p) keeps its ratio to the bandwidth-delay product in
  packets); delays and inter-arrival times are unchanged. ``tiny`` divides by 100 (CI).
- **Common random numbers**: replication ``r`` runs with core seed ``seed + r``; the
  core draws every flow's path, RTT, start, size and Reno-mix key from that seed alone
  (``app/workload.rs``), so every protocol of a replication sees the same flows and
  the same flows are on Reno in every mixed run.
- **Metrics** (:func:`analyse_runs`): per flow, throughput = goodput over its span
  (start to completion, or to the end of the run), and the seed's relative throughput
  against the same flow in the all-Reno run of the same case and replication; link
  utilisation of the 8 backbone links over the whole run; short-flow transfer times.

Example:
    >>> doc = variant_document(base_document(), "reduced", "scalable", "mixed", 40, True)
    >>> doc["topology"]["backbone"]["rate"], doc["topology"]["backbone"]["error"]
    ('100Mbps', {'kind': 'bernoulli', 'per': 0.0001})
    >>> doc["workload"]["classes"][0]["count"], doc["workload"]["classes"][0]["bytes"], doc["duration"]
    (40, '470MB', '5400s')
    >>> doc["cc"]["name"], doc["workload"]["classes"][1]["mix_fraction"]
    ('scalable', 0.5)
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcplab import _core, units
from tcplab.scenario import Scenario
from tcplab.studies import engine
from tcplab.studies import findings as fnd
from tcplab.studies.engine import BlockTask, StudyResult, task_key

__all__ = [
    "NAME", "SUMMARY", "PROTOCOLS", "SCALES", "StudyParams", "StudyResult", "base_document", "variant_document",
    "simulate_run", "plan", "run", "analyse_runs", "evaluate_findings", "EXAMPLES",
]

NAME = "highspeed"
SUMMARY = "Seed 002: 8 congestion controls alone and mixed with Reno on a 5-router parking lot with short flows"
#: Bumped when a change alters what a task computes, so old task files are not reused.
STUDY_VERSION = 2

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "highspeed"
BASE_FILE = "parking_lot.toml"
PROTOCOLS = ("reno", "highspeed", "scalable", "bic", "cubic", "htcp", "compound", "areno")
LABELS = {"reno": "Reno", "highspeed": "HighSpeed", "scalable": "Scalable", "bic": "BIC", "cubic": "CUBIC",
          "htcp": "H-TCP", "compound": "Compound", "areno": "AReno"}
MIXES = ("alone", "mixed")
#: Fraction of the long- and short-lived flows on Reno in a mixed run.
MIX_FRACTION = 0.5
#: Scale name -> divisor of rates, buffers and sizes.
SCALES = {"full": 1, "reduced": 10, "tiny": 100}
#: Random loss per packet per backbone link at full scale (x divisor^2 when reduced).
LOSS_PER_FULL = 1e-6
#: Run length: long-lived count x their mean inter-arrival time, plus this tail, s.
TAIL_S = 600
#: A flow's throughput is compared only if it started this long before the end, s.
MIN_SPAN_S = 60.0
#: The (long-lived count, random loss) cases of the seed.
CASES = ((10, False), (40, False), (10, True))
#: Hop-count bins of the per-hop analysis (3 and 4 hops pooled: few flows cross 4).
HOP_BINS = {1: "1", 2: "2", 3: "3-4", 4: "3-4"}


def base_document() -> dict[str, Any]:
    """The scenario file as a parsed TOML document."""
    from tcplab.scenario import parse_toml, read_text

    return parse_toml(read_text(EXAMPLES / BASE_FILE), str(EXAMPLES / BASE_FILE))


def _div(text: str, parse: Any, fmt: Any, k: int) -> str:
    """A quantity divided by ``k``, written back with its unit (``"1Gbps"``, 10 -> ``"100Mbps"``)."""
    return fmt(parse(text) // k)


def variant_document(base: dict[str, Any], scale: str, protocol: str, mix: str, n_long: int,
                     loss: bool) -> dict[str, Any]:
    """The scenario document of one run: ``base`` with the swept paths set (module doc)."""
    k = SCALES[scale]
    doc = copy.deepcopy(base)
    topo = doc["topology"]
    bb = topo["backbone"]
    bb["rate"] = _div(bb["rate"], units.parse_rate, units.format_rate, k)
    bb["queue"]["limit"] = _div(bb["queue"]["limit"], units.parse_size, units.format_size, k)
    topo["access_rate"] = _div(topo["access_rate"], units.parse_rate, units.format_rate, k)
    bb.pop("error", None)
    if loss:
        bb["error"] = {"kind": "bernoulli", "per": float(f"{LOSS_PER_FULL * k * k:.6g}")}
    doc["tcp"]["rcv_buffer"] = _div(doc["tcp"]["rcv_buffer"], units.parse_size, units.format_size, k)
    doc["cc"] = {"name": protocol}
    long_c, short_c = doc["workload"]["classes"]
    long_c["count"] = n_long
    long_c["bytes"] = _div(long_c["bytes"], units.parse_size, units.format_size, k)
    short_c["size"]["mean"] = _div(short_c["size"]["mean"], units.parse_size, units.format_size, k)
    for c in (long_c, short_c):
        c["mix_fraction"] = MIX_FRACTION if mix == "mixed" else 0.0
    gap_s = units.parse_time(long_c["interarrival_mean"]) / 1e9
    doc["duration"] = f"{round(n_long * gap_s + TAIL_S)}s"
    return doc


# --------------------------------------------------------------------------------------
# The worker

_FLOW_COLUMNS = ("name", "cls", "entry", "exit", "hops", "rtt_s", "flow_cc", "start_s", "bytes_target", "bytes_delivered",
                 "completed", "elapsed_s", "throughput_bps", "span_s")
_LINK_COLUMNS = ("link", "rate_bps", "utilisation", "tx_bytes", "drops")
_RUN_COLUMNS = ("core_seed", "duration_s", "events", "pkt_hops", "digest", "sim_wall_s")


def simulate_run(spec: dict[str, Any]) -> dict[str, Any]:
    """The worker: one run (protocol, mix, long-lived count, loss, replication).

    Returns the ``flows`` table (one row per flow: class, hop count, base RTT, its CC,
    throughput), ``links`` (the 8 backbone links) and ``runs`` (one row).

    Example:
        >>> spec = {"scale": "tiny", "protocol": "cubic", "mix": "mixed", "n_long": 2, "loss": False, "rep": 0,
        ...         "seed": 1, "base": base_document(), "short": 10}
        >>> out = simulate_run(spec)
        >>> len(out["flows"]["name"]), sorted(set(out["flows"]["flow_cc"])), len(out["links"]["link"])
        (12, ['cubic', 'reno'], 8)
    """
    import time

    doc = variant_document(spec["base"], spec["scale"], spec["protocol"], spec["mix"], int(spec["n_long"]),
                           bool(spec["loss"]))
    if spec.get("short") is not None:
        doc["workload"]["classes"][1]["count"] = int(spec["short"])
    core_seed = int(spec["seed"]) + int(spec["rep"])
    core = Scenario.from_dict(doc).to_core(core_seed)
    t0 = time.perf_counter()
    res = json.loads(_core.run(json.dumps(core, separators=(",", ":")), core_seed))
    wall = time.perf_counter() - t0
    f, lk, q, meta = res["flows"], res["links"], res["queues"], res["meta"]
    li = {n: i for i, n in enumerate(lk["link"])}
    bb = [n for n in lk["link"] if n.startswith("bb")]
    hop_delay = (lk["delay_s"][li["bb0"]] + lk["delay_s"][li["bb0_rev"]]) / 2
    rows: dict[str, list[Any]] = {c: [] for c in _FLOW_COLUMNS}
    for i, name in enumerate(f["name"]):
        hops = int(f["group"][i].rsplit("_h", 1)[1])
        d_s, d_d = lk["delay_s"][li[f"acc_{name}_s"]], lk["delay_s"][li[f"acc_{name}_d"]]
        elapsed = f["elapsed_s"][i]
        entry, exit_ = int(lk["to"][li[f"acc_{name}_s"]][1:]), int(lk["to"][li[f"acc_{name}_d"]][1:])
        values = {"name": name, "cls": f["group"][i].rsplit("_h", 1)[0], "entry": entry, "exit": exit_, "hops": hops,
                  "rtt_s": 2 * hops * hop_delay + 2 * (d_s + d_d), "flow_cc": f["cc"][i], "start_s": f["start_s"][i],
                  "bytes_target": f["bytes_target"][i], "bytes_delivered": f["bytes_delivered"][i],
                  "completed": elapsed is not None, "elapsed_s": math.nan if elapsed is None else elapsed,
                  "throughput_bps": f["goodput_bps"][i], "span_s": f["window_end_s"][i] - f["window_start_s"][i]}
        for c in _FLOW_COLUMNS:
            rows[c].append(values[c])
    qi = {n: i for i, n in enumerate(q["link"])}
    links = {"link": bb, "rate_bps": [lk["rate_bps"][li[n]] for n in bb],
             "utilisation": [lk["utilisation"][li[n]] for n in bb],
             "tx_bytes": [lk["tx_bytes"][li[n]] for n in bb],
             "drops": [q["drops_overflow"][qi[n]] + q["drops_corruption"][qi[n]] for n in bb]}
    runs = {"core_seed": [core_seed], "duration_s": [meta["sim_end_s"]], "events": [meta["events"]],
            "pkt_hops": [int(sum(lk["tx_pkts"]))], "digest": [meta["digest"]], "sim_wall_s": [wall]}
    return {"flows": rows, "links": links, "runs": runs}


# --------------------------------------------------------------------------------------
# Planning and running


def _list(value: Any, kind: type, accepted: tuple[Any, ...], name: str) -> list[Any]:
    items = value.split(",") if isinstance(value, str) else list(value)
    out = [kind(x.strip()) if isinstance(x, str) else kind(x) for x in items if str(x).strip()]
    bad = [x for x in out if x not in accepted]
    if bad or not out:
        raise ValueError(f"{name}: unknown value(s) {bad or out!r}; accepted: {', '.join(map(str, accepted))}")
    return [x for x in accepted if x in out]


@dataclass
class StudyParams:
    """Everything that defines a run of the study (and nothing about how it is executed).

    Attributes:
        reps: replications (independent draws of the flows) per configuration.
        links: accepted for the CLI's ``--links``; the study has one network, ``lot``.
        scale: ``reduced`` (default), ``full`` or ``tiny`` (:data:`SCALES`).
        protocols: the protocols besides Reno (comma-separated from the CLI).
        loads: long-lived flow counts to run, of 10 and 40.
        loss: also run the random-loss case (10 long-lived flows).
        seed: master seed; replication r uses core seed ``seed + r``.
        short: short-lived flows per run (seed 002: 100).

    Example:
        >>> StudyParams(reps=2).n_runs()      # 2 x 3 cases x (1 + 7 x 2)
        90
        >>> StudyParams(reps=2, protocols="scalable,areno", loads="10", loss=False).n_runs()
        10
    """

    reps: int = 6
    links: list[str] = field(default_factory=lambda: ["lot"])
    scale: str = "reduced"
    protocols: Any = field(default_factory=lambda: list(PROTOCOLS[1:]))
    loads: Any = field(default_factory=lambda: [10, 40])
    loss: bool = True
    seed: int = 1
    short: int = 100

    def __post_init__(self) -> None:
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 2:
            raise ValueError(f"reps must be an integer >= 2 (confidence intervals need two), got {self.reps!r}")
        if list(self.links) != ["lot"]:
            raise ValueError(f"unknown link(s) {self.links!r}; accepted: lot")
        if self.scale not in SCALES:
            raise ValueError(f"scale: unknown scale {self.scale!r}; accepted: {', '.join(SCALES)}")
        self.protocols = _list(self.protocols, str, PROTOCOLS[1:], "protocols")
        self.loads = _list(self.loads, int, (10, 40), "loads")
        if isinstance(self.loss, str):
            self.loss = self.loss.strip().lower() in ("1", "true", "yes", "on")
        if not 0 <= int(self.seed) < 2**63:
            raise ValueError(f"seed must be in [0, 2^63), got {self.seed}")
        if not 1 <= int(self.short) <= 10_000:
            raise ValueError(f"short must be 1 to 10000 flows, got {self.short}")

    def cases(self) -> list[tuple[int, bool]]:
        """(long-lived count, random loss) cases run."""
        return [(n, loss) for n, loss in CASES if n in self.loads and (self.loss or not loss)]

    def configurations(self) -> list[tuple[str, str, int, bool]]:
        """(protocol, mix, long-lived count, loss) of every run of a replication; the baseline first."""
        out = []
        for n, loss in self.cases():
            out.append(("reno", "alone", n, loss))
            out += [(p, m, n, loss) for p in self.protocols for m in MIXES]
        return out

    def n_runs(self) -> int:
        """Simulations in the study."""
        return len(self.configurations()) * self.reps


def plan(params: StudyParams) -> list[BlockTask]:
    """One task per run, heaviest (40 long-lived flows) first.

    Example:
        >>> len(plan(StudyParams(reps=2, protocols="areno", loads="10", loss=False)))
        6
    """
    base = base_document()
    tasks = []
    for rep in range(params.reps):
        for protocol, mix, n, loss in params.configurations():
            spec = {"study": NAME, "version": STUDY_VERSION, "scale": params.scale, "protocol": protocol, "mix": mix,
                    "n_long": n, "loss": loss, "rep": rep, "seed": int(params.seed), "short": int(params.short),
                    "base": base, "core": _core.version()}
            tasks.append(BlockTask(task_key(spec), spec, 1))
    return sorted(tasks, key=lambda t: -t.spec["n_long"])


RUN = ["protocol", "mix", "n_long", "loss", "rep"]


class Definition(engine.StudyDefinition):
    """Seed 002 for the shared study machine (:func:`tcplab.studies.engine.run_study`)."""

    name = NAME
    seed_study = "002_06d48414b99b3466"
    version = STUDY_VERSION
    task_tables = ("flows", "links", "runs")
    config_columns = (("protocol", "string"), ("mix", "string"), ("n_long", "int64"), ("loss", "bool"),
                      ("rep", "int64"))
    empty_columns = tuple(RUN)
    block = staticmethod(simulate_run)

    def plan(self, params: StudyParams) -> list[BlockTask]:
        return plan(params)

    def order(self, spec: dict[str, Any]) -> tuple[Any, ...]:
        return (CASES.index((spec["n_long"], spec["loss"])), PROTOCOLS.index(spec["protocol"]),
                MIXES.index(spec["mix"]), spec["rep"])

    def n_runs(self, params: StudyParams) -> int:
        return params.n_runs()

    def analyse(self, tables: dict[str, pd.DataFrame], params: StudyParams
                ) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        derived = analyse_runs(tables["flows"], tables["links"], tables["runs"])
        return derived, evaluate_findings(derived["run_metrics"], derived["relative"], params)

    def render_figures(self, tables: dict[str, pd.DataFrame], fig_dir: Path, params: StudyParams
                       ) -> list[dict[str, Any]]:
        from tcplab.studies.highspeed import report as highspeed_report

        return highspeed_report.render_figures(tables, fig_dir, params)

    def write_report(self, out: Path, params: StudyParams, tables: dict[str, pd.DataFrame],
                     findings: dict[str, Any], figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
        from tcplab.studies.highspeed import report as highspeed_report

        return highspeed_report.write_report(out, params, tables, findings, figs, manifest)


DEFINITION = Definition()


def run(out: str | Path, params: StudyParams | None = None, jobs: int | None = None, scheduler: str | None = None,
        progress: bool = True, figures: bool = True) -> StudyResult:
    """Runs (or resumes) the study and writes tables, figures, ``findings.json`` and ``report.html``.

    The CLI is ``tcplab study highspeed [--scale full|reduced] [--reps N] [--jobs J] [--scheduler ADDR]
    [--out DIR]``.
    """
    return engine.run_study(DEFINITION, out, params or StudyParams(), jobs=jobs, scheduler=scheduler,
                            progress=progress, figures=figures)


# --------------------------------------------------------------------------------------
# Analysis


def _union_length(intervals: list[tuple[float, float]]) -> float:
    """Total length of the union of intervals.

    Example:
        >>> _union_length([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (7.0, 7.0)])
        4.0
    """
    total, end = 0.0, -math.inf
    for a, b in sorted(intervals):
        if b <= end or b <= a:
            continue
        total += b - max(a, end)
        end = b
    return total


def active_utilisation(run_flows: pd.DataFrame, rate_bps: float, end_s: float, routers: int = 5) -> float:
    """Backbone utilisation by long-lived flows while they are active, over the 8 links.

    Link ``bb{i}`` (r_i -> r_{i+1}) carries the data of flows with ``entry <= i < exit``,
    ``bb{i}_rev`` those with ``exit <= i < entry``. For each link, its long-lived flows'
    delivered bits are divided by its rate times the length of the union of their
    active spans (start to completion, or to ``end_s``); the result pools the links:
    ``sum(bits) / sum(rate x active time)``. A protocol that moves the same files
    faster keeps the links busier while there is demand, which the whole-run
    utilisation (fixed by the offered bytes once every file completes) cannot show.

    Example:
        >>> f = pd.DataFrame({"cls": ["long"] * 3, "entry": [0, 1, 1], "exit": [2, 2, 2], "start_s": [0.0, 5.0, 25.0],
        ...                   "elapsed_s": [10.0, math.nan, math.nan], "bytes_delivered": [125, 250, 0]})
        >>> # (the third flow was drawn to start after the end, 20 s: it never ran)
        >>> # bb0: flow 0, 1000 bits over 10 s; bb1: both, 3000 bits over [0, 20]: 4000 / (1000 x 30)
        >>> round(active_utilisation(f, 1000.0, 20.0), 4)
        0.1333
    """
    long_f = run_flows[run_flows["cls"] == "long"]
    ends = np.where(long_f["elapsed_s"].notna(), long_f["start_s"] + long_f["elapsed_s"].fillna(0.0), end_s)
    # Flows drawn to start after the end of the run never ran: empty spans.
    spans = list(zip(np.minimum(long_f["start_s"].to_numpy(), end_s), np.minimum(ends, end_s)))
    bits = (8 * long_f["bytes_delivered"]).to_numpy()
    entry, exit_ = long_f["entry"].to_numpy(), long_f["exit"].to_numpy()
    num = den = 0.0
    for i in range(routers - 1):
        for on in ((entry <= i) & (i < exit_), (exit_ <= i) & (i < entry)):
            if on.any():
                num += float(bits[on].sum())
                den += rate_bps * _union_length([spans[j] for j in np.flatnonzero(on)])
    return float(num / den) if den > 0 else math.nan


def analyse_runs(flows: pd.DataFrame, links: pd.DataFrame, runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The derived tables.

    - ``relative``: one row per flow of a non-baseline run whose throughput can be
      compared (it started at least :data:`MIN_SPAN_S` before the end): its
      throughput, the same flow's in the all-Reno run of the same case and replication
      (``base_bps``), ``ratio`` = the two's quotient, and ``role``: ``hs`` (a flow on
      the protocol under test) or ``reno`` (a Reno flow of a mixed run).
    - ``run_metrics``: one row per non-baseline run: the seed's relative throughput
      (the mean of ``ratio`` over flows, first formula) of long-lived protocol flows
      (``rel_long``), of all protocol flows (``rel_all``), per hop bin
      (``rel_long_h1``, ``rel_long_h2``, ``rel_long_h3-4``); the Reno degradation
      (second formula, mixed runs: ``reno_deg_long``, ``reno_deg_all``); the mean
      backbone utilisation over the run and its difference from the baseline (``util``,
      ``util_gain``), the same for the utilisation while long-lived flows are active
      (:func:`active_utilisation`: ``util_active``, ``util_active_gain``); mean short-flow transfer times of protocol and of Reno flows, and
      the baseline's (``short_s``, ``short_reno_s``, ``short_base_s``).
    - ``link_util``: utilisation per backbone link and run.
    """
    if not len(flows):
        return {"relative": pd.DataFrame(), "run_metrics": pd.DataFrame(), "link_util": links}
    case = ["n_long", "loss", "rep"]
    base = flows[(flows["protocol"] == "reno") & (flows["mix"] == "alone")]
    base = base[case + ["name", "throughput_bps", "elapsed_s"]].rename(
        columns={"throughput_bps": "base_bps", "elapsed_s": "base_elapsed_s"})
    test = flows[flows["protocol"] != "reno"]
    rel = test.merge(base, on=case + ["name"], how="inner")
    end = rel.merge(runs[RUN + ["duration_s"]], on=RUN)["duration_s"].to_numpy()
    rel = rel[(rel["start_s"].to_numpy() <= end - MIN_SPAN_S) & (rel["base_bps"] > 0)].copy()
    rel["ratio"] = rel["throughput_bps"] / rel["base_bps"]
    rel["role"] = np.where(rel["flow_cc"] == rel["protocol"], "hs", "reno")
    rel["hop_bin"] = rel["hops"].map(HOP_BINS)

    util = links.groupby(RUN, sort=False)["utilisation"].mean().rename("util").reset_index()
    rate = float(links["rate_bps"].iloc[0])
    ends = runs.set_index(RUN)["duration_s"]
    active = pd.DataFrame([{**dict(zip(RUN, key)), "util_active": active_utilisation(part, rate, float(ends.loc[key]))}
                           for key, part in flows.groupby(RUN, sort=False)])
    util = util.merge(active, on=RUN, how="left")
    base_util = util[(util["protocol"] == "reno")][case + ["util", "util_active"]].rename(
        columns={"util": "base_util", "util_active": "base_util_active"})
    rows = []
    for key, part in rel.groupby(RUN, sort=False):
        row = dict(zip(RUN, key))
        hs, reno = part[part["role"] == "hs"], part[part["role"] == "reno"]
        hs_long, reno_long = hs[hs["cls"] == "long"], reno[reno["cls"] == "long"]
        row["rel_long"] = hs_long["ratio"].mean()
        row["rel_all"] = hs["ratio"].mean()
        for b in sorted(set(HOP_BINS.values())):
            row[f"rel_long_h{b}"] = hs_long.loc[hs_long["hop_bin"] == b, "ratio"].mean()
        row["reno_deg_long"] = reno_long["ratio"].mean() if len(reno_long) else math.nan
        row["reno_deg_all"] = reno["ratio"].mean() if len(reno) else math.nan
        sh = part[part["cls"] == "short"]
        row["short_s"] = sh.loc[sh["role"] == "hs", "elapsed_s"].mean()
        row["short_reno_s"] = sh.loc[sh["role"] == "reno", "elapsed_s"].mean() if len(reno) else math.nan
        row["short_base_s"] = sh["base_elapsed_s"].mean()
        rows.append(row)
    rm = pd.DataFrame(rows)
    rm = rm.merge(util, on=RUN, how="left").merge(base_util, on=case, how="left")
    rm["util_gain"] = rm["util"] - rm["base_util"]
    rm["util_active_gain"] = rm["util_active"] - rm["base_util_active"]
    return {"relative": rel.reset_index(drop=True), "run_metrics": rm, "link_util": links}


def _per_rep(rm: pd.DataFrame, metric: str, where: dict[str, Any], offset: float = 0.0) -> pd.Series:
    """Per replication, the mean of ``metric - offset`` over the runs in scope."""
    sub = rm
    for col, values in where.items():
        sub = sub[sub[col].isin(list(values))]
    return (sub.groupby("rep")[metric].mean() - offset).dropna()


def _est(rm: pd.DataFrame, metric: str, where: dict[str, Any], offset: float = 0.0) -> dict[str, Any]:
    s = _per_rep(rm, metric, where, offset)
    return fnd.estimate(s) if len(s) else {"value": math.nan, "ci": [math.nan, math.nan], "n": 0}


def _per_case(rm: pd.DataFrame, metric: str, where: dict[str, Any], offset: float = 0.0) -> list[dict[str, Any]]:
    """One estimate per (long-lived count, loss) case, over replications."""
    out = []
    for (n, loss), _ in rm.groupby(["n_long", "loss"], sort=True):
        e = _est(rm, metric, {**where, "n_long": [n], "loss": [loss]}, offset)
        if e["n"]:
            out.append({"n_long": int(n), "loss": bool(loss), **e})
    return out


def _diff(rm: pd.DataFrame, metric: str, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Per replication, mean ``metric`` in scope ``a`` minus in scope ``b``; Student-t over replications."""
    d = (_per_rep(rm, metric, a) - _per_rep(rm, metric, b)).dropna()
    return fnd.estimate(d) if len(d) else {"value": math.nan, "ci": [math.nan, math.nan], "n": 0}


def evaluate_findings(rm: pd.DataFrame, rel: pd.DataFrame, params: StudyParams) -> dict[str, Any]:
    """Checks seed 002's conclusions; returns the ``findings.json`` document.

    Each statistic is, per replication, the mean of a per-run metric over the cases in
    scope (10 and 40 long-lived flows, with and without loss), then a 95% Student-t
    interval over replications. Relative throughputs are tested as ``ratio - 1``.
    """
    check, finding, above, below = fnd.legacy_check, fnd.finding, fnd.above, fnd.below
    present = set(rm["protocol"]) if len(rm) else set()
    alone, mixed = {"mix": ["alone"]}, {"mix": ["mixed"]}
    findings: list[dict[str, Any]] = []

    def gain_checks(p: str, cid: str) -> list[dict[str, Any]]:
        e_thr = _est(rm, "rel_long", {**alone, "protocol": [p]}, 1.0)
        e_util = _est(rm, "util_active_gain", {**alone, "protocol": [p]})
        return [
            check(f"{cid}a", f"{LABELS[p]} raises per-flow throughput",
                  f"relative throughput of long-lived {LABELS[p]} flows (alone) vs the same flows under Reno, minus 1, "
                  "mean over cases; held if the 95% CI is above 0", "relative throughput - 1", "fraction", e_thr,
                  above(e_thr), _per_case(rm, "rel_long", {**alone, "protocol": [p]}, 1.0)),
            check(f"{cid}b", f"{LABELS[p]} raises link utilisation",
                  f"backbone utilisation while long-lived flows are active (active_utilisation) with {LABELS[p]} "
                  "(alone) minus with Reno; held if the 95% CI is above 0", "active utilisation difference",
                  "fraction of capacity", e_util, above(e_util),
                  _per_case(rm, "util_active_gain", {**alone, "protocol": [p]}),
                  whole_run_utilisation_difference=fnd.clean(_est(rm, "util_gain", {**alone, "protocol": [p]}))),
        ]

    # H1 ------------------------------------------------------------------------------
    checks = []
    for i, p in enumerate(("highspeed", "scalable", "bic")):
        if p in present:
            checks += gain_checks(p, f"H1{'abc'[i]}")
    findings.append(finding("H1", "HighSpeed, Scalable and BIC raise per-flow throughput and link utilisation", checks,
                            "not evaluated: none of these protocols was run"))

    # H2 ------------------------------------------------------------------------------
    checks = []
    bins = [f"rel_long_h{b}" for b in sorted(set(HOP_BINS.values()))]
    for cid, p in (("H2a", "htcp"), ("H2b", "areno")):
        if p not in present:
            continue
        ests = {b: _est(rm, b, {**alone, "protocol": [p]}, 1.0) for b in bins}
        worst_bin = min(ests, key=lambda b: ests[b]["ci"][0] if ests[b]["n"] else math.inf)
        checks.append(check(cid, f"with {LABELS[p]} all flows improve regardless of hop count",
                            "relative throughput - 1 of long-lived flows (alone) per hop count (1, 2, 3-4), mean over "
                            "cases; held if every hop bin's 95% CI is above 0 (statistic: the bin with the lowest bound)",
                            f"relative throughput - 1, {worst_bin.replace('rel_long_h', '')} hops", "fraction",
                            ests[worst_bin], all(above(e) for e in ests.values()),
                            [{"hops": b.replace("rel_long_h", ""), **e} for b, e in ests.items()]))
    if "scalable" in present:
        lo, hi = bins[0], bins[-1]
        d = _est(rm.assign(_h=rm[lo] - rm[hi]), "_h", {**alone, "protocol": ["scalable"]})
        far = _est(rm, hi, {**alone, "protocol": ["scalable"]}, 1.0)
        near_ = _est(rm, lo, {**alone, "protocol": ["scalable"]}, 1.0)
        checks.append(check("H2c", "with Scalable only short-hop flows improve",
                            "relative throughput of long-lived Scalable flows (alone), 1-hop minus 3-4-hop, mean over "
                            "cases; held if the 95% CI is above 0, 1-hop flows improve (CI above 0) and 3-4-hop flows "
                            "do not (CI not above 0)", "relative throughput, 1 hop - 3-4 hops", "fraction", d,
                            above(d) and above(near_) and not above(far), [],
                            one_hop=fnd.clean(near_), three_four_hops=fnd.clean(far)))
    findings.append(finding("H2", "H-TCP and AReno give per-flow fairness: all flows improve regardless of hop count, "
                                  "whereas with Scalable only short-hop flows improve", checks,
                            "not evaluated: none of these protocols was run"))

    # H3 ------------------------------------------------------------------------------
    checks = []
    hs = [p for p in PROTOCOLS[1:] if p in present]
    for p in hs:
        e = _est(rm, "util_active_gain", {**alone, "protocol": [p]})
        checks.append(check(f"H3-{p}", f"{LABELS[p]} improves efficiency (link utilisation)",
                            f"backbone utilisation while long-lived flows are active with {LABELS[p]} (alone) minus "
                            "with Reno; held if the 95% CI is above 0", "active utilisation difference",
                            "fraction of capacity", e, above(e),
                            _per_case(rm, "util_active_gain", {**alone, "protocol": [p]}),
                            whole_run_utilisation_difference=fnd.clean(_est(rm, "util_gain",
                                                                            {**alone, "protocol": [p]}))))
    if "compound" in hs and len(hs) > 1:
        others = [p for p in hs if p != "compound"]
        diffs = {p: _diff(rm, "util_active_gain", {**alone, "protocol": [p]}, {**alone, "protocol": ["compound"]})
                 for p in others}
        closest = min(others, key=lambda p: diffs[p]["value"] if not math.isnan(diffs[p]["value"]) else math.inf)
        checks.append(check("H3-least", "Compound improves efficiency the least",
                            "active-utilisation gain of each other protocol minus Compound's (alone, paired by "
                            "replication); "
                            "held if every difference's 95% CI is above 0 (statistic: the closest protocol)",
                            f"utilisation gain, {LABELS[closest]} - Compound", "fraction of capacity", diffs[closest],
                            all(above(e) for e in diffs.values()),
                            [{"protocol": p, **e} for p, e in diffs.items()]))
    findings.append(finding("H3", "Every high-speed TCP improves efficiency, Compound the least", checks,
                            "not evaluated: no high-speed protocol was run"))

    # H4 ------------------------------------------------------------------------------
    checks = []
    rivals = [p for p in ("highspeed", "scalable", "bic", "htcp") if p in present]
    for cid, p in (("H4a", "compound"), ("H4b", "areno")):
        if p not in present or not rivals:
            continue
        diffs = {r: _diff(rm, "reno_deg_long", {**mixed, "protocol": [p]}, {**mixed, "protocol": [r]})
                 for r in rivals}
        closest = min(rivals, key=lambda r: diffs[r]["value"] if not math.isnan(diffs[r]["value"]) else math.inf)
        checks.append(check(cid, f"{LABELS[p]} is friendlier to Reno than HighSpeed, Scalable, BIC and H-TCP",
                            f"long-lived Reno flows' relative throughput (second formula, mixed runs) with "
                            f"{LABELS[p]} minus with each rival; held if every difference's 95% CI is above 0 "
                            "(statistic: the closest rival)", f"Reno relative throughput, {LABELS[p]} - "
                            f"{LABELS[closest]}", "fraction", diffs[closest], all(above(e) for e in diffs.values()),
                            [{"rival": r, **e} for r, e in diffs.items()],
                            reno_relative_throughput=fnd.clean(_est(rm, "reno_deg_long", {**mixed, "protocol": [p]})),
                            reno_relative_throughput_long_and_short=fnd.clean(
                                _est(rm, "reno_deg_all", {**mixed, "protocol": [p]}))))
    if "areno" in present:
        e = _est(rm, "rel_long", {**alone, "protocol": ["areno"]}, 1.0)
        checks.append(check("H4c", "AReno is also efficient", "relative throughput - 1 of long-lived AReno flows "
                            "(alone); held if the 95% CI is above 0", "relative throughput - 1", "fraction", e, above(e),
                            _per_case(rm, "rel_long", {**alone, "protocol": ["areno"]}, 1.0)))
    findings.append(finding("H4", "Compound and AReno are the friendliest to Reno, and AReno is both friendly and "
                                  "efficient", checks, "not evaluated: Compound and AReno were not run"))

    doc = fnd.document(NAME, "002_06d48414b99b3466", asdict(params), params.reps, ["lot"], fnd.METHOD, findings)
    doc["summary"] = summary_rows(rm)
    return doc


def summary_rows(rm: pd.DataFrame) -> list[dict[str, Any]]:
    """Per protocol and mix, means over every run: the numbers behind the trade-off chart."""
    rows = []
    if not len(rm):
        return rows
    for (p, m), part in rm.groupby(["protocol", "mix"], sort=False):
        rows.append({"protocol": p, "mix": m, "runs": int(len(part)),
                     **{c: fnd.num(part[c].mean()) for c in ("rel_long", "rel_all", "reno_deg_long", "reno_deg_all",
                                                              "util", "util_gain", "util_active", "util_active_gain",
                                                              "short_s", "short_reno_s", "short_base_s")}})
    return rows
