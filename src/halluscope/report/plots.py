"""Plots for the HTML report (matplotlib, Agg backend, returned as PNG bytes)."""

from __future__ import annotations

import io

from halluscope.core.records import TASKS


def pyplot():
    """matplotlib.pyplot on the Agg backend, imported on first use (a command's --help never pays for it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def __getattr__(name: str):
    # 'from halluscope.report.plots import plt' keeps working, importing matplotlib only then
    if name == "plt":
        return pyplot()
    raise AttributeError(name)


DPI = 110


def png(fig) -> bytes:
    """The figure as PNG, cropped to its drawn content (what savefig's bbox_inches="tight" gives), drawn once.

    savefig(bbox_inches="tight") draws the whole figure once without output to place everything, then again
    for the picture: half the report's plotting time. The tight box needs no draw here (ticks, titles,
    legends and annotations place themselves when asked for their extent), so it is measured first and handed
    to savefig as a fixed box; tests check the bytes equal savefig's own "tight" output."""
    import matplotlib as mpl

    fig.set_dpi(DPI)
    bbox = fig.get_tightbbox(fig.canvas.get_renderer())
    pad = mpl.rcParams["savefig.pad_inches"]
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches=bbox.padded(pad, pad))
    pyplot().close(fig)
    return buf.getvalue()


def o_vs_t_plot(table2: list[dict], languages: list[str]) -> bytes | None:
    """Macro-F1 on original text (O) and transcripts (T) by language, one panel per task, majority as a line."""
    rows = [r for r in table2 if r["language"] in languages]
    if not rows:
        return None
    fig, axes = pyplot().subplots(1, len(TASKS), figsize=(4.2 * len(TASKS), 3.4), sharey=True)
    for ax, task in zip(axes, TASKS):
        sub = {r["language"]: r for r in rows if r["task"] == task}
        xs = list(range(len(languages)))
        for offset, key, color, name in (
            (-0.18, "O", "#2b6cb0", "original text (O)"),
            (0.18, "T", "#dd6b20", "ASR transcript (T)"),
        ):
            vals = [sub[l][f"{key}_f1"] if l in sub and sub[l][f"{key}_f1"] is not None else 0 for l in languages]
            cis = [sub[l][f"{key}_f1_ci"] if l in sub and sub[l][f"{key}_f1_ci"] else None for l in languages]
            err = [
                [max(0.0, v - c[0]) if c else 0 for v, c in zip(vals, cis)],
                [max(0.0, c[1] - v) if c else 0 for v, c in zip(vals, cis)],
            ]
            ax.bar([x + offset for x in xs], vals, width=0.34, color=color, label=name, yerr=err, capsize=3)
        for x, l in zip(xs, languages):
            if l in sub:
                ax.hlines(sub[l]["majority_f1"], x - 0.4, x + 0.4, colors="black", linestyles="dashed", linewidth=1)
        ax.set_xticks(xs, languages)
        ax.set_title(task)
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("macro-F1 (95% bootstrap CI)")
    axes[-1].legend(loc="upper right", fontsize=8, title="dashed: majority", title_fontsize=8)
    return png(fig)


def asr_vs_degradation_plot(asr: list[dict], table2: list[dict], languages: list[str]) -> bytes | None:
    """Per-language WER against the O->T macro-F1 drop, one marker per task (seed 000, 4.1 analysis)."""
    wer = {r["language"]: r["wer"] for r in asr if r["wer"] is not None}
    pts = [r for r in table2 if r["language"] in languages and r["delta_f1"] is not None and r["language"] in wer]
    if not pts:
        return None
    fig, ax = pyplot().subplots(figsize=(5.2, 3.6))
    markers = {"binary": "o", "type": "s", "severity": "^"}
    for task in TASKS:
        sub = [r for r in pts if r["task"] == task]
        ax.scatter(
            [wer[r["language"]] for r in sub], [r["delta_f1"] for r in sub], marker=markers[task], label=task, s=50
        )
        for r in sub:
            ax.annotate(
                r["language"],
                (wer[r["language"]], r["delta_f1"]),
                textcoords="offset points",
                xytext=(4, 3),
                fontsize=8,
            )
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("corpus WER of the language")
    ax.set_ylabel("macro-F1 drop O -> T")
    ax.legend(fontsize=8)
    return png(fig)


def wer_cer_plot(asr: list[dict]) -> bytes | None:
    rows = [r for r in asr if r["wer"] is not None]
    if not rows:
        return None
    fig, ax = pyplot().subplots(figsize=(5.0, 3.2))
    xs = list(range(len(rows)))
    ax.bar([x - 0.18 for x in xs], [r["wer"] for r in rows], width=0.34, label="WER", color="#805ad5")
    ax.bar([x + 0.18 for x in xs], [r["cer"] for r in rows], width=0.34, label="CER", color="#38a169")
    ax.set_xticks(xs, [r["language"] for r in rows])
    ax.set_ylabel("corpus-level error rate")
    ax.legend(fontsize=8)
    return png(fig)
