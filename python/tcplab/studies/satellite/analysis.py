"""Analysis of the ``satellite`` study (seed 004): per-run metrics, the summary table, paired estimates.

Every comparison is paired by replication: replication ``r`` of every configuration
runs with core seed ``seed + r`` and so meets the same error time series (common random
numbers; :mod:`.configs`). The estimates follow :mod:`tcplab.studies.findings`: per
replication, the mean over the configurations in scope, then a 95% Student-t interval
over the replications; identical replications give an exact value.

Example:
    >>> import pandas as pd
    >>> rm = pd.DataFrame({"dama": ["cra"] * 4, "slacp": [False] * 4, "error": ["none"] * 4, "n_flows": [1] * 4,
    ...                    "variant": ["reference", "enhanced"] * 2, "rep": [0, 0, 1, 1],
    ...                    "elapsed_s": [80.0, 60.0, 80.0, 60.0]})
    >>> pairs, est, per = paired(rm, "elapsed_s", "variant", "enhanced", "reference", {})
    >>> est["value"], est["exact"], per[0]["dama"]
    (-0.25, True, 'cra')
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import pandas as pd

from tcplab import stats
from tcplab.studies import findings as fnd
from tcplab.studies.satellite.configs import (ALL_VARIANTS, BASE_TCP, DAMA_MODES, DAMA_ORDER, ERROR_LABELS,
                                              ERROR_MODELS, RECOVERY_RUN, RUN, SEED_ERROR_TABLE, VARIANT_LABELS,
                                              WORKLOADS, channel_model)

__all__ = ["run_metrics", "summary_table", "per_table", "recovery_summary", "paired", "paired_arms", "per_rep",
           "pooled", "contrast", "per_config", "combine_pairs", "levels", "error_cost"]

_NAN_EST: dict[str, Any] = {"value": math.nan, "ci": [math.nan, math.nan], "n": 0, "exact": False}


def _order(df: pd.DataFrame) -> pd.DataFrame:
    """Rows in report order: workload, DAMA mode, SLACP, error model, replication, TCP variant."""
    if not len(df):
        return df
    keys = pd.DataFrame({"_n": df["n_flows"], "_d": df["dama"].map(DAMA_ORDER.index), "_s": df["slacp"].astype(int),
                         "_e": df["error"].map(list(ERROR_MODELS).index),
                         "_v": df["variant"].map(list(ALL_VARIANTS).index)}, index=df.index)
    ordered = pd.concat([df, keys], axis=1).sort_values(["_n", "_d", "_s", "_e", "rep", "_v"], kind="stable")
    return ordered.drop(columns=list(keys.columns)).reset_index(drop=True)


def run_metrics(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run, in report order, with derived columns.

    ``retx_per_frame`` = SLACP retransmissions per frame first sent; ``fec_per_frame`` =
    redundancy frames per frame first sent (NaN without SLACP).
    """
    if not len(runs):
        return runs
    rm = runs.copy()
    rm["slacp"] = rm["slacp"].astype(bool)
    rm["retx_per_frame"] = rm["ll_frames_retransmitted"] / rm["ll_frames_sent"]
    rm["fec_per_frame"] = rm["ll_fec_frames_sent"] / rm["ll_frames_sent"]
    return _order(rm)


def summary_table(rm: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and TCP variant: means with 95% Student-t half-widths over replications."""
    rows = []
    for key, part in rm.groupby(RUN[:-1], sort=False):
        dama, slacp, error, n, variant = key
        row: dict[str, Any] = {"DAMA": dama, "SLACP": "on" if slacp else "off", "error": ERROR_LABELS[error],
                               "workload": f"{n} x {WORKLOADS[n]}", "TCP": VARIANT_LABELS[variant], "reps": len(part)}
        for col, name in (("elapsed_s", "elapsed (s)"), ("retransmits", "TCP retx/run"), ("rtos", "RTOs/run"),
                          ("drops_overflow", "overflow drops/run"), ("overshoot_drops", "overshoot drops/run"),
                          ("ll_frames_given_up", "given up/run")):
            est = stats.mean_ci(part[col].astype(float))
            row[name] = est.value
            row[name + " ±"] = (est.high - est.value) if est.n >= 2 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _pooled_loss(runs: pd.DataFrame) -> tuple[float, int]:
    """Frames lost / frames sent on the return link, pooled over ``runs``; and the frames sent."""
    frames = runs["link_frames"].astype(float)
    lost = (runs["realised_per"].astype(float) * frames).round()
    total = float(frames.sum())
    return (float(lost.sum()) / total if total > 0 else math.nan), int(total)


def per_table(rm: pd.DataFrame, channel: pd.DataFrame | None, errors: Sequence[str]) -> pd.DataFrame:
    """Realised frame loss (PER) per error model against the seed's column and the channel model.

    One row per lossy model in ``errors``: the seed's average PER, the channel model's
    time in the bad state and its loss of back-to-back frames of 90.625 ms
    (:func:`~tcplab.studies.satellite.configs.channel_model`), the realised loss of the
    channel probe (a busy CRA link; ``channel``), and the realised loss under the study's
    TCP traffic (1 MB, Reference and Enhanced, pooled frames): per DAMA mode without SLACP,
    and with SLACP over every DAMA mode (SLACP's own retransmissions and FEC frames
    included). Fractions; NaN where nothing ran.
    """
    rows = []
    one = rm[(rm["n_flows"] == 1) & rm["variant"].isin(BASE_TCP)] if len(rm) else rm
    for e in errors:
        if e == "none":
            continue
        model = channel_model(e)
        row: dict[str, Any] = {"error": e, "seed_avg_per": SEED_ERROR_TABLE[e][0],
                               "time_fraction": model["time_fraction"], "model_frame_loss": model["frame_loss"]}
        ch = channel[channel["error"] == e] if channel is not None and len(channel) else None
        if ch is not None and len(ch):
            frames = int(ch["frames"].sum())
            row["channel_per"] = float(ch["frames_lost"].sum()) / frames
            row["channel_frames"] = frames
            row["channel_s"] = float(ch["duration_s"].sum())
        else:
            row.update(channel_per=math.nan, channel_frames=0, channel_s=0.0)
        row["channel_vs_model"] = row["channel_per"] / model["frame_loss"] - 1
        mine = one[one["error"] == e] if len(one) else one
        for d in DAMA_MODES:
            part = mine[(mine["dama"] == d) & ~mine["slacp"]] if len(mine) else mine
            row[f"tcp_{d}"], row[f"tcp_{d}_frames"] = _pooled_loss(part) if len(part) else (math.nan, 0)
        part = mine[mine["slacp"]] if len(mine) else mine
        row["tcp_slacp"], row["tcp_slacp_frames"] = _pooled_loss(part) if len(part) else (math.nan, 0)
        rows.append(row)
    return pd.DataFrame(rows)


def recovery_summary(rec: pd.DataFrame) -> pd.DataFrame:
    """The allocation-delay probe per DAMA mode, allocation delay, SLACP setting and TCP: means with 95% half-widths."""
    rows = []
    if rec is None or not len(rec):
        return pd.DataFrame()
    for key, part in rec.groupby(RECOVERY_RUN[:-1], sort=True):
        design, dama, slacp, delay, variant = key
        row: dict[str, Any] = {"design": design, "DAMA": dama,
                               "allocation delay (superframes)": int(delay) if dama != "cra" else 0,
                               "SLACP": "on" if slacp else "off", "TCP": VARIANT_LABELS[variant], "reps": len(part),
                               "unrecovered": int((~part["recovered"].astype(bool)).sum())}
        for col, name in (("recovery_s", "recovery (s)"), ("deficit_s", "link time lost (s)"),
                          ("rate_pre_pps", "pre-burst rate (pkt/s)"), ("rtos", "RTOs/run"),
                          ("retransmits", "TCP retx/run")):
            est = stats.mean_ci(part[col].astype(float))
            row[name] = est.value
            row[name + " ±"] = (est.high - est.value) if est.n >= 2 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Paired estimates


def paired(rm: pd.DataFrame, metric: str, factor: str, test: Any, ref: Any, where: dict[str, Sequence[Any]],
           relative: bool = True) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    """``test - ref`` (relative to ``ref`` unless ``relative=False``) of ``metric``, paired by replication.

    :func:`tcplab.studies.findings.paired` on the study's run columns: the per-pair
    table, the pooled estimate and one estimate per configuration.
    """
    return fnd.paired(rm, metric, factor, test, ref, where, relative, unit=RUN)


def paired_arms(rm: pd.DataFrame, metric: str, test: dict[str, Any], ref: dict[str, Any],
                where: dict[str, Sequence[Any]], relative: bool = True
                ) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    """Like :func:`paired`, for two arms that differ in several columns at once.

    Example: Enhanced TCP without SLACP (``test={"variant": "enhanced", "slacp": False}``)
    against Reference TCP with SLACP, paired on the remaining configuration columns and
    the replication.
    """
    keys = sorted(set(test) | set(ref))
    sub = rm
    for col, values in where.items():
        sub = sub[sub[col].isin(list(values))]
    parts = []
    for arm, sel in (("test", test), ("ref", ref)):
        mask = pd.Series(True, index=sub.index)
        for col, value in sel.items():
            mask &= sub[col] == value
        parts.append(sub[mask].assign(arm=arm))
    df = pd.concat(parts, ignore_index=True)
    unit = [c for c in RUN if c not in keys] + ["arm"]
    return fnd.paired(df, metric, "arm", "test", "ref", {}, relative, unit=unit)


def per_rep(pairs: pd.DataFrame) -> pd.Series:
    """Per replication, the mean paired difference over the configurations of ``pairs``."""
    return pairs.groupby("rep")["diff"].mean() if len(pairs) else pd.Series(dtype=float)


def pooled(*tables: pd.DataFrame) -> dict[str, Any]:
    """Several per-pair tables pooled: per replication, the mean of every pair; estimated over replications."""
    tables = tuple(t for t in tables if len(t))
    if not tables:
        return dict(_NAN_EST)
    return fnd.estimate(per_rep(pd.concat(tables, ignore_index=True)))


def contrast(a: pd.DataFrame, b: pd.DataFrame) -> dict[str, Any]:
    """Per replication, the mean difference in scope ``a`` minus that in scope ``b``, estimated.

    The statistic of a :class:`tcplab.studies.findings.Contrast`.
    """
    if not len(a) or not len(b):
        return dict(_NAN_EST)
    return fnd.difference(per_rep(a), per_rep(b))


def per_config(pairs: pd.DataFrame, **label: Any) -> list[dict[str, Any]]:
    """One estimate per configuration of a per-pair table (every column but ``rep`` and ``diff``).

    ``label`` columns are added to every row (e.g. ``comparison="RBDC vs CRA"``).
    """
    if not len(pairs):
        return []
    config = [c for c in pairs.columns if c not in ("rep", "diff")]
    out = []
    for key, part in pairs.groupby(config, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        cfg = {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(config, key)}
        out.append({**label, **cfg, **fnd.estimate(part["diff"])})
    return out


def combine_pairs(tables: Sequence[pd.DataFrame], how: Callable[[pd.DataFrame], pd.Series]) -> pd.DataFrame:
    """Several per-pair tables on the same configurations and replications, merged into one ``diff`` by ``how``.

    Example: the smaller of "RBDC vs CRA" and "VBDC vs CRA" per configuration and
    replication (``how=lambda d: d.min(axis=1)``): CRA is the best mode where it is above 0.
    """
    if not tables or any(not len(t) for t in tables):
        return pd.DataFrame()
    keys = [c for c in tables[0].columns if c != "diff"]
    wide = tables[0].rename(columns={"diff": "d0"})
    for i, t in enumerate(tables[1:], 1):
        wide = wide.merge(t.rename(columns={"diff": f"d{i}"}), on=keys, how="inner")
    cols = [f"d{i}" for i in range(len(tables))]
    return wide[keys].assign(diff=how(wide[cols]))


def levels(rm: pd.DataFrame, metric: str, where: dict[str, Sequence[Any]]
           ) -> tuple[pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    """The level of ``metric`` (not a difference): per-run table, pooled estimate, per configuration.

    Same shape as :func:`paired`'s result, with ``diff`` holding the metric itself.
    """
    sub = rm
    for col, values in where.items():
        sub = sub[sub[col].isin(list(values))]
    table = sub[RUN + [metric]].rename(columns={metric: "diff"}).dropna(subset=["diff"])
    return table, pooled(table), per_config(table)


def error_cost(rm: pd.DataFrame, metric: str = "elapsed_s") -> pd.DataFrame:
    """The time link errors add to a transfer: ``metric`` minus the same run on the error-free link.

    For every run on a lossy error model, the error-free run of the same DAMA mode, SLACP
    setting, workload, TCP variant and replication is subtracted (``error_cost_s``).
    Empty when the error-free model was not run.
    """
    clean = rm[rm["error"] == "none"]
    if not len(clean):
        return rm.iloc[0:0].assign(error_cost_s=pd.Series(dtype=float))
    keys = [c for c in RUN if c != "error"]
    base = clean[keys + [metric]].rename(columns={metric: "_clean"})
    lossy = rm[rm["error"] != "none"].merge(base, on=keys, how="inner")
    return lossy.assign(error_cost_s=lossy[metric] - lossy["_clean"]).drop(columns=["_clean"])

