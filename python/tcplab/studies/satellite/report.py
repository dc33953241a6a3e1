"""Figures and ``report.html`` of the ``satellite`` study (seed 004, ``docs/seeds/004_af47799115785341.txt``).

Figures (``figures/*.png`` and ``.svg``):

- ``elapsed_1mb`` / ``elapsed_4x250kb``: elapsed time against error model, one panel per
  DAMA mode and SLACP setting, one line per TCP variant, 95% CIs over replications
  (findings S1-S3, S7, S11, S12);
- ``elapsed_by_dama``: the same data by DAMA mode (findings S4-S6);
- ``workloads``: one flow against four (findings S13, S14);
- ``overshoot_drops``: segments lost in the initial slow start's overshoot against
  error model, 1 MB (findings S8-S12);
- ``overshoot_trace``: Enhanced TCP's slow start without errors or SLACP: cwnd, ssthresh,
  the MAC buffer's occupancy and the drops, per DAMA mode (the seed's "Trace of Enhanced
  TCP");
- ``link_layer``: SLACP's counters per error model;
- ``rbdc_timeout``: tcplab's RBDC-timeout diagnostic (extension X1);
- ``recovery``: the allocation-delay probe: recovery time after one burst against the
  allocation delay, per DAMA mode and SLACP setting (finding S4, check S4c).

The module takes what it draws from :mod:`.configs` (constants) and its arguments
(tables, findings); it does not import the package that calls it.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcplab import stats
from tcplab.studies import reporting as R
from tcplab.studies.satellite import analysis as A
from tcplab.studies.satellite import configs as S

__all__ = ["render_figures", "write_report"]

_COLORS = {"reference": "#1f77b4", "enhanced": "#d62728", "enhanced+cbi": "#2ca02c", "enhanced-daass": "#9467bd",
           "enhanced-rfc3390": "#e377c2", "enhanced-rfc3390+cbi": "#bcbd22", "enhanced-rfc3390-daass": "#17becf",
           "cra": "#2ca02c", "rbdc": "#ff7f0e", "vbdc": "#1f77b4", S.RBDC_DIAGNOSTIC: "#8c564b"}


def _mean_ci(part: pd.Series) -> tuple[float, float]:
    e = stats.mean_ci(part.astype(float).dropna())
    return e.value, (e.high - e.value) if e.n >= 2 else 0.0


def _lines(ax: Any, df: pd.DataFrame, by: str, keys: list[Any], labels: dict[Any, str], errors: list[str],
           metric: str = "elapsed_s", styles: dict[Any, dict[str, Any]] | None = None) -> None:
    x = np.arange(len(errors))
    for i, k in enumerate(keys):
        part = df[df[by] == k]
        if not len(part):
            continue
        m, h = zip(*[_mean_ci(part.loc[part["error"] == e, metric]) for e in errors])
        style = (styles or {}).get(k, {"color": _COLORS.get(k)})
        ax.errorbar(x + (i - (len(keys) - 1) / 2) * 0.06, m, yerr=h, marker="o", ms=3, capsize=2, lw=1.2,
                    label=labels.get(k, str(k)), **style)
    ax.set_xticks(x, [S.ERROR_LABELS[e] for e in errors])
    ax.grid(alpha=0.3)


def _grid(rm: pd.DataFrame, fig_dir: Path, stem: str, n_flows: int, errors: list[str]) -> dict[str, Any]:
    fig, axes = R.figure(3, 2, 9.5, 9.0, sharey=True)
    variants = list(S.variants_of(n_flows))
    for r, dama in enumerate(S.DAMA_MODES):
        for c, slacp in enumerate((False, True)):
            ax = axes[r, c]
            sub = rm[(rm["dama"] == dama) & (rm["slacp"] == slacp) & (rm["n_flows"] == n_flows)]
            _lines(ax, sub, "variant", variants, S.VARIANT_LABELS, errors)
            ax.set_title(f"{dama.upper()}, SLACP {'on' if slacp else 'off'}")
            if c == 0:
                ax.set_ylabel("elapsed time (s)")
    axes[0, 0].legend(fontsize=8)
    work = f"{n_flows} x {S.WORKLOADS[n_flows]}"
    return {"stem": stem, "section": "elapsed", **R.save(fig, fig_dir, stem),
            "caption": f"Elapsed time ({work}; until the last byte of the last flow) against the error model, per DAMA "
                       "mode and SLACP setting: mean over replications with 95% Student-t intervals."}


def render_figures(tables: dict[str, pd.DataFrame], fig_dir: Path, params: S.StudyParams) -> list[dict[str, Any]]:
    """Draws every figure of the report into ``fig_dir``; returns their descriptions."""
    fig_dir.mkdir(parents=True, exist_ok=True)
    rm = tables["run_metrics"]
    figs: list[dict[str, Any]] = []
    if not len(rm):
        return figs
    errors = list(params.errors)
    main = rm[rm["dama"].isin(S.DAMA_MODES)]
    figs.append(_grid(main, fig_dir, "elapsed_1mb", 1, errors))
    figs.append(_grid(main, fig_dir, "elapsed_4x250kb", 4, errors))

    fig, axes = R.figure(2, 2, 9.5, 6.5, sharey=True)
    for r, variant in enumerate(("reference", "enhanced")):
        for c, slacp in enumerate((False, True)):
            sub = main[(main["variant"] == variant) & (main["slacp"] == slacp) & (main["n_flows"] == 1)]
            _lines(axes[r, c], sub, "dama", list(S.DAMA_MODES), {d: d.upper() for d in S.DAMA_MODES}, errors)
            axes[r, c].set_title(f"{S.VARIANT_LABELS[variant]}, SLACP {'on' if slacp else 'off'}")
        axes[r, 0].set_ylabel("elapsed time (s)")
    axes[0, 0].legend(fontsize=8)
    figs.append({"stem": "elapsed_by_dama", "section": "elapsed", **R.save(fig, fig_dir, "elapsed_by_dama"),
                 "caption": "Elapsed time of the 1 MB transfer by DAMA mode (findings S4-S6), mean and 95% CI."})

    fig, axes = R.figure(1, 2, 9.5, 3.6, sharey=True)
    for c, slacp in enumerate((False, True)):
        ax = axes[0, c]
        x = np.arange(len(errors))
        for i, (variant, n) in enumerate([(v, n) for v in ("reference", "enhanced") for n in (1, 4)]):
            sub = main[(main["variant"] == variant) & (main["slacp"] == slacp) & (main["n_flows"] == n)]
            m, h = zip(*[_mean_ci(sub.loc[sub["error"] == e, "elapsed_s"]) for e in errors])
            ax.errorbar(x + (i - 1.5) * 0.06, m, yerr=h, marker="o" if n == 1 else "s", ms=3, capsize=2,
                        color=_COLORS[variant], ls="-" if n == 1 else "--",
                        label=f"{S.VARIANT_LABELS[variant]}, {n} x {S.WORKLOADS[n]}")
        ax.set_xticks(x, [S.ERROR_LABELS[e] for e in errors])
        ax.set_title(f"SLACP {'on' if slacp else 'off'} (pooled over DAMA modes)")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("elapsed time (s)")
    axes[0, 0].legend(fontsize=7)
    figs.append({"stem": "workloads", "section": "elapsed", **R.save(fig, fig_dir, "workloads"),
                 "caption": "One 1 MB flow against four 250 kB flows (finding S13): time until the last byte."})

    one = main[main["n_flows"] == 1]
    if len(one):
        fig, axes = R.figure(3, 2, 9.5, 9.0, sharey=True)
        for r, dama in enumerate(S.DAMA_MODES):
            for c, slacp in enumerate((False, True)):
                sub = one[(one["dama"] == dama) & (one["slacp"] == slacp)]
                _lines(axes[r, c], sub, "variant", list(S.VARIANTS), S.VARIANT_LABELS, errors, metric="overshoot_drops")
                axes[r, c].set_title(f"{dama.upper()}, SLACP {'on' if slacp else 'off'}")
                if c == 0:
                    axes[r, c].set_ylabel("segments lost in the overshoot")
        axes[0, 0].legend(fontsize=8)
        figs.append({"stem": "overshoot_drops", "section": "trace", **R.save(fig, fig_dir, "overshoot_drops"),
                     "caption": "Segments lost to buffer overflow at the terminal while their flow was still in its "
                                "initial slow start (the overshoot), 1 MB, mean and 95% CI (findings S8-S12)."})

    cw, qu, dr = tables.get("trace_cwnd"), tables.get("trace_queue"), tables.get("trace_drops")
    if cw is not None and len(cw):
        fig, axes = R.figure(3, 1, 9.5, 8.0, sharex=True)
        for r, dama in enumerate(S.DAMA_MODES):
            ax = axes[r, 0]
            c = cw[cw["dama"] == dama]
            q = qu[qu["dama"] == dama] if qu is not None and len(qu) else qu
            d = dr[dr["dama"] == dama] if dr is not None and len(dr) else dr
            ax.step(c["t_s"], c["cwnd_bytes"] / 1e3, where="post", color="#d62728", label="cwnd")
            ax.step(c["t_s"], c["ssthresh_bytes"] / 1e3, where="post", color="#7f7f7f", ls="--", label="ssthresh")
            if q is not None and len(q):
                ax.step(q["t_s"], q["bytes"] / 1e3, where="post", color="#1f77b4", label="MAC buffer")
            if d is not None and len(d):
                ax.plot(d["t_s"], np.full(len(d), 2.0), "x", color="k", ms=4, label="drop")
            ax.axhline(28.8, color="#1f77b4", lw=0.6, ls=":")
            ax.set_ylabel("kB")
            ax.set_title(f"{dama.upper()}: Enhanced TCP, no SLACP, no errors (replication 0)")
            ax.set_xlim(0, 25)
            ax.set_ylim(0, max(80.0, float(np.nanmax(c["cwnd_bytes"].head(400))) / 1e3 * 1.1) if len(c) else None)
            ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=8, ncol=4)
        axes[-1, 0].set_xlabel("time (s)")
        figs.append({"stem": "overshoot_trace", "section": "trace", **R.save(fig, fig_dir, "overshoot_trace"),
                     "caption": "Slow-start overshoot: cwnd and ssthresh of Enhanced TCP, the MAC buffer's occupancy "
                                "(28.8 kB dotted) and the buffer-overflow drops (x), first 25 s."})

    on = main[main["slacp"] & (main["n_flows"] == 1) & main["variant"].isin(["reference", "enhanced"])]
    if len(on):
        fig, axes = R.figure(2, 2, 9.5, 6.5)
        panels = [("retx_per_frame", "retransmissions per frame"), ("fec_per_frame", "FEC frames per frame"),
                  ("ll_fec_blocks_recovered", "blocks recovered by FEC per run"),
                  ("realised_per", "frame loss on the link (per transmission)")]
        for ax, (metric, label) in zip(axes.flat, panels):
            _lines(ax, on, "dama", list(S.DAMA_MODES), {d: d.upper() for d in S.DAMA_MODES}, errors, metric=metric)
            ax.set_title(label)
        axes[0, 0].legend(fontsize=8)
        figs.append({"stem": "link_layer", "section": "ll", **R.save(fig, fig_dir, "link_layer"),
                     "caption": "SLACP's counters on the return link (1 MB, Reference and Enhanced pooled), mean and "
                                "95% CI per error model and DAMA mode. Frames given up (residual loss): "
                                f"{int(on['ll_frames_given_up'].sum())} in {len(on)} runs."})

    diag = rm[(rm["n_flows"] == 1) & rm["variant"].isin(["reference", "enhanced"])]
    diag_errors = [e for e in errors if (diag["dama"] == S.RBDC_DIAGNOSTIC).any()
                   and e in set(diag.loc[diag["dama"] == S.RBDC_DIAGNOSTIC, "error"])]
    if diag_errors:
        fig, axes = R.figure(1, 2, 9.5, 3.6, sharey=True)
        modes = ["cra", "rbdc", S.RBDC_DIAGNOSTIC, "vbdc"]
        labels = {"cra": "CRA", "rbdc": "RBDC (timeout 318 ms)", S.RBDC_DIAGNOSTIC: "RBDC (timeout 1 s)", "vbdc": "VBDC"}
        for c, slacp in enumerate((False, True)):
            _lines(axes[0, c], diag[diag["slacp"] == slacp], "dama", modes, labels, diag_errors)
            axes[0, c].set_title(f"SLACP {'on' if slacp else 'off'} (Reference and Enhanced pooled, 1 MB)")
        axes[0, 0].set_ylabel("elapsed time (s)")
        axes[0, 0].legend(fontsize=8)
        figs.append({"stem": "rbdc_timeout", "section": "diag", **R.save(fig, fig_dir, "rbdc_timeout"),
                     "caption": "tcplab's diagnostic (extension X1): RBDC with its grant timeout raised from 12 "
                                "superframes to 1 s."})

    rec = tables.get("recovery")
    if rec is not None and len(rec):
        designs = [d for d in S.RECOVERY_DESIGNS if (rec["design"] == d).any()]
        fig, axes = R.figure(len(designs), 2, 9.5, 3.4 * len(designs), sharey=True)
        delays = list(S.ALLOC_DELAYS_SF)
        x = np.arange(len(delays))
        for r, design in enumerate(designs):
            d_rec = rec[rec["design"] == design]
            for c, slacp in enumerate((False, True)):
                ax = axes[r, c]
                for i, (dama, variant) in enumerate([(d, v) for d in ("rbdc", "vbdc") for v in S.BASE_TCP]):
                    sub = d_rec[(d_rec["dama"] == dama) & (d_rec["slacp"] == slacp) & (d_rec["variant"] == variant)]
                    if not len(sub):
                        continue
                    m, h = zip(*[_mean_ci(sub.loc[sub["alloc_delay_sf"] == a, "recovery_s"]) for a in delays])
                    ax.errorbar(x + (i - 1.5) * 0.05, m, yerr=h, marker="o" if variant == "reference" else "s", ms=3,
                                capsize=2, color=_COLORS[dama], ls="-" if variant == "reference" else "--",
                                label=f"{dama.upper()}, {S.VARIANT_LABELS[variant]}")
                cra = d_rec[(d_rec["dama"] == "cra") & (d_rec["slacp"] == slacp) & d_rec["variant"].isin(S.BASE_TCP)]
                if len(cra):
                    ax.axhline(float(cra["recovery_s"].mean()), color=_COLORS["cra"], lw=1, ls=":",
                               label="CRA (no requests)")
                ax.set_xticks(x, [f"{a} ({a * S.SUPERFRAME_US / 1e3:g} ms)" for a in delays])
                ax.set_title(f"{design}: {S.RECOVERY_DESIGNS[design]['bytes']}, SLACP {'on' if slacp else 'off'}")
                ax.grid(alpha=0.3)
            axes[r, 0].set_ylabel("recovery time (s)")
        for c in range(2):
            axes[-1, c].set_xlabel("allocation delay, superframes")
        axes[0, 0].legend(fontsize=7)
        figs.append({"stem": "recovery", "section": "recovery", **R.save(fig, fig_dir, "recovery"),
                     "caption": "The allocation-delay probe (checks S4c, early: 1 MB, burst at 20-35 s; S4d, "
                                "steady: 3 MB, burst at 60-90 s): one burst of 100-300 ms per run; the time from its "
                                "end until every 2 s window carries 90% of the pre-burst delivered rate again, mean "
                                "and 95% CI over replications."})
    return figs


def _pct(x: Any) -> str:
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{100 * float(x):.2f}%"


def _setup_html(params: S.StudyParams, per: pd.DataFrame | None) -> str:
    rows = []
    by = {r["error"]: r for r in per.to_dict("records")} if per is not None and len(per) else {}
    for e in params.errors:
        seed_per, gap, burst = S.SEED_ERROR_TABLE[e]
        r = by.get(e, {})
        rows.append({"error model": S.ERROR_LABELS[e], "seed avg PER": seed_per, "between bursts": gap,
                     "burst length": burst, "time in bad state": _pct(r.get("time_fraction", 0.0)),
                     "channel model (frames of 90.625 ms)": _pct(r.get("model_frame_loss", 0.0)),
                     "realised, busy CRA link": _pct(r.get("channel_per", 0.0 if e == "none" else None)),
                     "realised, TCP CRA / RBDC / VBDC": " / ".join(_pct(r.get(f"tcp_{d}", 0.0 if e == "none" else None))
                                                                  for d in S.DAMA_MODES),
                     "realised, TCP with SLACP": _pct(r.get("tcp_slacp", 0.0 if e == "none" else None))})
    return ("<h2 id='setup'>Set-up</h2><p>A satellite terminal sends 1 MB (or 4 x 250 kB in parallel) to the gateway "
            "over a GEO return link: 128 kbit/s, 250 ms, MTU 1450 (MSS 1410), DAMA CRA/RBDC/VBDC in 26.5 ms "
            "superframes of 8 slots, allocation delay 21 superframes (556.5 ms), RBDC timeout 12 superframes. The "
            "forward link (512 kbit/s, 250 ms) carries TCP's and SLACP's ACKs. Without SLACP the MAC buffer is "
            "28.8 kB; with SLACP it is 14.4 kB, fed under flow control from a 14.4 kB IP queue. Configurations are "
            "<code>examples/satellite/geo_return.toml</code> and <code>geo_return_slacp.toml</code> swept by path; "
            "<code>docs/studies/satellite.md</code> gives every choice the seed leaves open.</p>"
            "<p>Error models are seed 004's time series on the return link (a frame is lost if any part of its "
            "airtime meets a bad state); each replication draws its own series, shared by every variant of that "
            "replication. The realised frame loss (<code>per_table.parquet</code>) follows the channel model; the "
            "seed's PER column is not reached: its own burst durations do not give it under any frame-loss rule "
            "(<code>docs/studies/satellite.md</code>). TCP columns: 1 MB, Reference and Enhanced, frames pooled.</p>"
            + R.table_html(pd.DataFrame(rows)))


def _setup_readings_html(findings: dict[str, Any]) -> str:
    """Every finding's verdict again under each second reading of the set-up (Enhanced TCP's initial window)."""
    parts = []
    own = {f["id"]: f for f in findings["findings"]}
    for reading in findings.get("setup_readings") or []:
        rows = []
        for f in reading["findings"]:
            checks = ", ".join(f"{c['id']} {c['verdict']}" for c in f["checks"] if not c["extension"])
            rows.append({"finding": f["id"], "verdict as run": own[f["id"]]["verdict"] if f["id"] in own else "–",
                         "verdict with this reading": f["verdict"], "checks": checks})
        parts.append(f"<h3>Second reading of the set-up: {html.escape(reading['name'])}</h3><p class='small'>"
                     f"{html.escape(reading['changes'])}; every finding checked again on those runs "
                     "(<code>findings.json</code>, <code>setup_readings</code>).</p>" + R.table_html(pd.DataFrame(rows)))
    return "".join(parts)


def write_report(out: Path, params: S.StudyParams, tables: dict[str, pd.DataFrame], findings: dict[str, Any],
                 figs: list[dict[str, Any]], manifest: dict[str, Any]) -> Path:
    """Writes ``out/report.html`` (self-contained: figures embedded as PNG, linked to their files)."""
    rm = tables["run_metrics"]
    title = "tcplab study satellite: SLACP and DAMA under TCP over a lossy GEO return link (seed 004)"
    unfinished = int(rm["unfinished"].sum()) if len(rm) else 0
    intro = ("<p>M. Kojo, <i>On Efficient and TCP/IP Friendly Link Layers for Wireless WANs</i>, FDPW 2005 "
             "(<code>docs/seeds/004_af47799115785341.txt</code>), its claims checked on tcplab's simulator. " + R.provenance(manifest, f"{params.n_runs()} runs ({unfinished} flows unfinished)")
             + "</p>" + R.nav(["runs.parquet", "run_metrics.parquet", "summary.parquet", "trace_cwnd.parquet",
                               "trace_queue.parquet", "trace_drops.parquet", "recovery.parquet", "channel.parquet",
                               "per_table.parquet", "findings.json", "study.json"]))
    diag = findings.get("diagnostics") or {}
    extra = _setup_readings_html(findings)
    if diag:
        rows = [{"comparison": k.replace("_", " "), "relative change": R.fmt(v["value"]),
                 "95% CI": f"[{R.fmt(v['ci'][0])}, {R.fmt(v['ci'][1])}]", "replications": v["n"]}
                for k, v in diag.items() if isinstance(v, dict)]
        extra += ("<h3>Diagnostic (tcplab's, extension X1): RBDC's grant timeout</h3><p class='small'>" + html.escape(diag.get("scope", ""))
                 + "; relative change of elapsed time, paired by replication.</p>" + R.table_html(pd.DataFrame(rows)))
    rec = tables.get("recovery")
    if rec is not None and len(rec):
        extra += ("<h3>The allocation-delay probe (check S4c)</h3><p class='small'>One burst per run; recovery = "
                  "the time from its end until every 2 s window carries 90% of the pre-burst delivered rate again "
                  "(within 15 s); link time lost = 15 s less the packets delivered in those 15 s over the pre-burst "
                  "rate. Means and 95% half-widths over replications.</p>" + R.table_html(A.recovery_summary(rec)))
    summary_html = ("<h2 id='summary'>Summary table</h2><p class='small'>Per configuration and TCP variant, means over "
                    "replications; “±” is the half-width of the 95% Student-t interval.</p>"
                    + R.table_html(tables["summary"]))
    sections = {"elapsed": "Elapsed time against error model", "trace": "Slow-start overshoot",
                "ll": "Link-layer counters", "diag": "Diagnostic", "recovery": "Allocation delay and recovery"}
    return R.write_page(out, title, intro, [
        _setup_html(params, tables.get("per_table")),
        R.findings_html(findings, "seed 004", "docs/studies/satellite.md", extra),
        R.figures_html(out, figs, sections), summary_html,
        R.failures_html(manifest, ("dama", "slacp", "error", "n_flows", "reps")), R.parameters_html(manifest)])
