"""Plots and report.html (tcplab.plots, tcplab.report), including a headless-Chromium check.

The tables here are written by hand in the documented schema (tcplab.results.COLUMNS),
so the renderer is tested without the simulator; tests/test_run.py renders reports of
real runs.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcplab import plots
from tcplab.cli import main
from tcplab.report import ResultsDir, flow_groups, over_replications, write_report
from tcplab.results import frame, write_json_atomic, write_table_atomic

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def make_sweep_dir(d: Path) -> Path:
    rng = np.random.default_rng(7)
    flows, queues, links, cwnd = [], [], [], []
    for point, iw in enumerate([3, 10]):
        for rep in range(3):
            key = f"k{point}{rep}"
            n = 4
            elapsed = rng.uniform(1, 3, n) / (1 + point)
            f = frame("flows", {
                "flow_id": list(range(n)), "name": [f"b.{j}" for j in range(n)], "group": ["b"] * n,
                "cc": ["reno"] * n, "src": ["s0"] * n, "dst": ["d0"] * n, "start_s": [0.0] * n,
                "established_s": [0.3] * n, "completed_s": list(elapsed), "elapsed_s": list(elapsed),
                "bytes_target": [45000] * n, "bytes_delivered": [45000] * n,
                "goodput_bps": list(45000 * 8 / elapsed), "segs_sent": [31] * n, "retransmits": [1] * n,
                "fast_retransmits": [1] * n, "rtos": [0] * n, "spurious_rtos": [0] * n, "syn_retransmits": [0] * n,
            })
            head = {"point": point, "replication": rep, "seed": rep, "run_key": key, "tcp.iw": iw}
            flows.append(f.assign(**head))
            queues.append(frame("queues", {"link": ["bottleneck"], "enq_pkts": [120], "enq_bytes": [180000],
                                           "drops_overflow": [3], "drops_early": [0], "drops_forced": [0],
                                           "drops_corruption": [0], "occ_mean_pkts": [5.0], "occ_max_pkts": [20.0],
                                           "occ_mean_bytes": [7500.0], "occ_max_bytes": [30000.0]}).assign(**head))
            links.append(frame("links", {"link": ["bottleneck"], "rate_bps": [2_000_000], "delay_s": [0.07],
                                         "tx_pkts": [117], "tx_bytes": [175500], "utilisation": [0.8 + 0.05 * point],
                                         "busy_sample_fraction": [0.9], "realised_per": [0.0]}).assign(**head))
            t = np.linspace(0, 2, 50)
            cwnd.append(frame("series_cwnd", {"t_s": list(t), "flow_id": [0] * 50,
                                              "cwnd_bytes": [int(1460 * (iw + 10 * x)) for x in t],
                                              "ssthresh_bytes": [None] * 25 + [30000.0] * 25, "srtt_s": [0.2] * 50,
                                              "rto_s": [1.0] * 50, "state": ["open"] * 50}).assign(**head))
    for name, parts in (("flows", flows), ("queues", queues), ("links", links), ("series_cwnd", cwnd)):
        write_table_atomic(pd.concat(parts, ignore_index=True), d / f"{name}.parquet")
    write_table_atomic(frame("udp", {}), d / "udp.parquet")
    write_json_atomic({"scenario": {"name": "hand-made"}, "scenario_toml": 'name = "hand-made"\n', "grid": {"tcp.iw": [3, 10]},
                       "replications": 3, "seeds": [0, 1, 2], "started": "2025-01-01T00:00:00+00:00"}, d / "manifest.json")
    return d


def test_report_has_figures_tables_and_grid(tmp_path: Path) -> None:
    d = make_sweep_dir(tmp_path)
    assert main(["report", str(d)]) == 0
    text = (d / "report.html").read_text()
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", text)
    assert len(images) >= 4  # elapsed CDF, goodput bars, sweep curves, cwnd
    assert "http://" not in text and "https://" not in text  # self-contained
    assert "tcp.iw" in text and "Jain" in text and "Loss rate" in text
    assert sorted(p.name for p in (d / "figures").iterdir()) >= ["cwnd.png", "elapsed_cdf.png", "goodput_bars.png"]
    res = ResultsDir.read(d)
    assert list(res.variant(res.tables["flows"]).unique()) == ["tcp.iw=3", "tcp.iw=10"]


def test_report_of_a_non_results_directory_is_bad_input(tmp_path: Path, capsys) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "not a results directory" in capsys.readouterr().err
    assert not (tmp_path / "report.html").exists()


def test_sweep_curve_puts_means_and_envelope_where_stats_say() -> None:
    df = pd.DataFrame({"q": ["20pkt"] * 3 + ["48pkt"] * 3, "v": [1.0, 2.0, 3.0, 4.0, 4.0, 4.0]})
    fig = plots.sweep_curve(df, "q", "v")
    ax = fig.axes[0]
    xs, ys = ax.lines[0].get_data()
    assert list(xs) == [20.0, 48.0] and list(ys) == [2.0, 4.0]
    # Envelope at x=20: 2 +- t(0.975, 2) * 1/sqrt(3) = 2 +- 4.303 * 0.5774 = [-0.484, 4.484].
    verts = ax.collections[0].get_paths()[0].vertices
    assert min(verts[:, 1]) == pytest.approx(-0.4841, abs=1e-3) and max(verts[:, 1]) == pytest.approx(4.4841, abs=1e-3)


def test_plots_leave_pyplot_state_alone() -> None:
    import matplotlib
    import matplotlib.pyplot as plt

    before = (plt.get_fignums(), matplotlib.rcParams["font.size"])
    plots.bars_with_ci(pd.DataFrame({"l": ["a"], "mean": [1.0], "mean_low": [0.5], "mean_high": [1.5]}), "l")
    assert (plt.get_fignums(), matplotlib.rcParams["font.size"]) == before


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_figures_render_in_headless_chromium(tmp_path: Path) -> None:
    d = make_sweep_dir(tmp_path / "res")
    report = write_report(d)
    # Probe page: the report plus a script that writes each image's natural size into the DOM.
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text().replace(
        "</body>",
        "<script>window.addEventListener('load',()=>{const s=[...document.images].map(i=>i.naturalWidth+'x'+i.naturalHeight);"
        "const p=document.createElement('pre');p.id='sizes';p.textContent=['SIZES',s.join(','),'END'].join('|');document.body.appendChild(p);});</script></body>",
    ))
    profile = tmp_path / "profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r"SIZES\|([0-9x,]*)\|END", out.stdout)
    assert m, f"no sizes in the DOM; chromium stderr: {out.stderr[-2000:]}"
    sizes = [tuple(map(int, s.split("x"))) for s in m.group(1).split(",") if s]
    n_images = len(re.findall(r"<img ", report.read_text()))
    assert len(sizes) == n_images >= 4
    assert all(w > 100 and h > 100 for w, h in sizes), sizes


def make_hand_sweep(d: Path) -> Path:
    """One grid point, three replications, two CUBIC and two BBR flows without a group.

    CUBIC goodputs (Mbit/s) per replication: (1, 3), (2, 4), (3, 5); BBR: (6, 6) in each.
    """
    flows = []
    cubic = [(1.0, 3.0), (2.0, 4.0), (3.0, 5.0)]
    for rep in range(3):
        good = [x * 1e6 for x in cubic[rep]] + [6e6, 6e6]
        f = frame("flows", {"flow_id": [0, 1, 2, 3], "name": ["c.0", "c.1", "b.0", "b.1"], "group": [""] * 4,
                            "cc": ["cubic", "cubic", "bbr", "bbr"], "goodput_bps": good,
                            "elapsed_s": [None] * 4, "bytes_delivered": [1] * 4})
        flows.append(f.assign(point=0, replication=rep, seed=rep, run_key=f"k{rep}", **{"tcp.iw": 10}))
    write_table_atomic(pd.concat(flows, ignore_index=True), d / "flows.parquet")
    write_json_atomic({"scenario": {"name": "hand"}, "grid": {"tcp.iw": [10]}, "replications": 3, "seeds": [0, 1, 2]},
                      d / "manifest.json")
    return d


def test_intervals_are_over_replications_and_groups_default_to_the_cc(tmp_path: Path) -> None:
    from tcplab.report import _summaries

    res = ResultsDir.read(make_hand_sweep(tmp_path))
    goodput = dict(_summaries(res))["Goodput per flow (Mbit/s)"].set_index("group")
    # CUBIC, one value per replication (the mean of its two flows): 2, 3, 4. Mean 3, s = 1,
    # t(0.975, 2) = 4.30265, half-width 4.30265 / sqrt(3) = 2.48414: [0.51586, 5.48414] over n = 3.
    # (Pooling the six flows would give n = 6, s = 1.414, t(0.975, 5) = 2.5706: [1.516, 4.484].)
    assert goodput.loc["cubic", "replications"] == 3 and goodput.loc["cubic", "mean"] == pytest.approx(3.0)
    assert goodput.loc["cubic", "95% CI over replications"] == "[0.5159, 5.484]"
    raw = over_replications(res.tables["flows"].assign(group=flow_groups(res.tables["flows"])), "goodput_bps",
                            ["group"]).set_index("group")
    assert raw.loc["cubic", "mean_low"] == pytest.approx(0.51586e6, rel=1e-4)
    assert raw.loc["cubic", "mean_high"] == pytest.approx(5.48414e6, rel=1e-4)
    # BBR is its own group (not pooled with CUBIC into 4.5), and 6 in every replication: exact.
    assert goodput.loc["bbr", "mean"] == pytest.approx(6.0)
    assert goodput.loc["bbr", "95% CI over replications"] == "exact (the same in all 3 replications)"
    # Jain's index within CUBIC, one per replication: (1+3)^2/(2*10) = 0.8, 36/40 = 0.9, 64/68 = 0.941176.
    jain = dict(_summaries(res))[
        "Jain's fairness index of goodput within each group (dimensionless; one index per replication)"]
    row = jain.set_index("group").loc["cubic"]
    assert row["replications"] == 3 and row["mean"] == pytest.approx((0.8 + 0.9 + 64 / 68) / 3)
    assert "(all flows)" in set(jain["group"])  # the fairness between CUBIC and BBR too


def test_goodput_bar_labels_do_not_overlap() -> None:
    labels = [f"topology.bottleneck.queue.limit={q}pkt / {cc}" for q in (20, 50, 100, 200) for cc in ("bbr", "cubic")]
    summary = pd.DataFrame({"label": labels, "mean": np.linspace(1, 8, 8), "mean_low": np.linspace(0.5, 7.5, 8),
                            "mean_high": np.linspace(1.5, 8.5, 8)})
    fig = plots.bars_with_ci(summary, "label", xlabel="goodput (Mbit/s)")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text() in labels]
    assert len(boxes) == len(labels)
    overlaps = [(labels[i], labels[j]) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
                if boxes[i].overlaps(boxes[j])]
    assert not overlaps
    # Every label lies inside the figure (none clipped at its edge).
    fig_box = fig.bbox
    assert all(b.x0 >= fig_box.x0 - 1 and b.x1 <= fig_box.x1 + 1 for b in boxes)


def make_run_with_cwnd(d: Path, n: int) -> Path:
    names = [f"f{j}" for j in range(n)]
    write_table_atomic(frame("flows", {"flow_id": list(range(n)), "name": names, "group": ["bulk"] * n,
                                       "cc": ["reno"] * n, "goodput_bps": [1e6] * n}), d / "flows.parquet")
    t = np.linspace(0, 1, 20)
    write_table_atomic(pd.concat([frame("series_cwnd", {
        "t_s": list(t), "flow_id": [j] * 20, "cwnd_bytes": [1460 * (j + 2)] * 20, "ssthresh_bytes": [1e18] * 20,
        "srtt_s": [0.1] * 20, "rto_s": [1.0] * 20, "state": ["open"] * 20}) for j in range(n)], ignore_index=True),
        d / "series_cwnd.parquet")
    write_json_atomic({"name": "cwnd-run", "seed": 1, "sim_end_s": 1.0}, d / "meta.json")
    return d


def _cwnd_caption(html_text: str) -> str:
    m = re.search(r"<img alt='cwnd'[^>]*><figcaption>([^<]*)</figcaption>", html_text)
    assert m, "no cwnd figure"
    return m.group(1)


def test_cwnd_figure_shows_every_flow_or_names_those_left_out(tmp_path: Path, capsys) -> None:
    from tcplab.report import MAX_CWND_FLOWS

    few = make_run_with_cwnd(tmp_path / "few", 5)
    assert main(["report", str(few)]) == 0
    assert "of every flow with a cwnd series (5)" in _cwnd_caption((few / "report.html").read_text())

    many = make_run_with_cwnd(tmp_path / "many", MAX_CWND_FLOWS + 3)
    assert main(["report", str(many)]) == 0
    caption = _cwnd_caption((many / "report.html").read_text())
    left = [f"f{j}" for j in range(MAX_CWND_FLOWS, MAX_CWND_FLOWS + 3)]
    assert f"{MAX_CWND_FLOWS} of the {MAX_CWND_FLOWS + 3} flows" in caption and ", ".join(left) in caption
    assert "--cwnd-flows" in caption

    # Chosen flows are drawn, and the others named as left out.
    assert main(["report", str(many), "--cwnd-flows", "f9,f10"]) == 0
    caption = _cwnd_caption((many / "report.html").read_text())
    assert "2 of the 11 flows" in caption and "f9" not in caption.split("left out:")[1].split(".")[0]
    # A name that is no flow is bad input, reported before anything is written.
    (many / "report.html").unlink()
    assert main(["report", str(many), "--cwnd-flows", "f99"]) == 2
    err = capsys.readouterr().err
    assert "--cwnd-flows: no flow or group 'f99'" in err and "f0" in err and "bulk" in err
    assert not (many / "report.html").exists()


def test_cwnd_series_draws_every_flow_it_is_given() -> None:
    series = pd.concat([pd.DataFrame({"t_s": [0.0, 1.0], "flow_id": [j, j], "cwnd_bytes": [1460, 2920],
                                      "ssthresh_bytes": [1e18, 1e18]}) for j in range(10)], ignore_index=True)
    fig = plots.cwnd_series(series)
    assert len(fig.axes[0].lines) == 10 and len(fig.legends[0].get_texts()) == 10
