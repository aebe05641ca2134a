"""Plots of the closed-form report (matplotlib, Agg backend, returned as PNG bytes)."""

from __future__ import annotations

from collections.abc import Sequence

from halluscope.report.plots import png, pyplot

COLORS = {"strict": "#2b6cb0", "compat": "#dd6b20"}


def grouped_bars(
    groups: Sequence[str],
    series: dict[str, Sequence[float | None]],
    *,
    ylabel: str,
    errors: dict[str, Sequence[tuple[float, float] | None]] | None = None,
) -> bytes | None:
    """One bar per (group, series); a missing value is drawn as an empty slot, never as zero."""
    if not groups or not any(v is not None for vals in series.values() for v in vals):
        return None
    fig, ax = pyplot().subplots(figsize=(max(4.5, 1.1 * len(groups) + 2), 3.4))
    width = 0.8 / max(1, len(series))
    for k, (name, vals) in enumerate(series.items()):
        xs = [i - 0.4 + width * (k + 0.5) for i in range(len(groups))]
        present = [(x, v) for x, v in zip(xs, vals) if v is not None]
        yerr = None
        if errors and name in errors:
            ci = [c for c, v in zip(errors[name], vals) if v is not None]
            yerr = [
                [max(0.0, v - c[0]) if c else 0 for (_, v), c in zip(present, ci)],
                [max(0.0, c[1] - v) if c else 0 for (_, v), c in zip(present, ci)],
            ]
        ax.bar(
            [x for x, _ in present],
            [v for _, v in present],
            width=width,
            label=name,
            color=COLORS.get(name.split()[0]),
            alpha=1.0 if k % 2 == 0 else 0.8,
            yerr=yerr,
            capsize=3,
        )
    ax.set_xticks(
        range(len(groups)), groups, rotation=20 if len(groups) > 4 else 0, ha="right" if len(groups) > 4 else "center"
    )
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return png(fig)


def yes_ratio_scatter(points: Sequence[dict]) -> bytes | None:
    """Yes ratio (x) against accuracy (y), one marker per group and mode; y = x marks accuracy a yes-bias explains."""
    pts = [p for p in points if p.get("yes_ratio") is not None and p.get("accuracy") is not None]
    if not pts:
        return None
    fig, ax = pyplot().subplots(figsize=(5.4, 4.0))
    for mode, marker in (("strict", "o"), ("compat", "s")):
        sub = [p for p in pts if p["mode"] == mode]
        if sub:
            ax.scatter(
                [p["yes_ratio"] for p in sub],
                [p["accuracy"] for p in sub],
                marker=marker,
                s=45,
                color=COLORS[mode],
                label=mode,
                alpha=0.85,
            )
            for p in sub:
                ax.annotate(
                    p["name"], (p["yes_ratio"], p["accuracy"]), textcoords="offset points", xytext=(4, 3), fontsize=7
                )
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="dashed")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("yes ratio (share of answers 'yes')")
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=8)
    return png(fig)
