"""The report's PNGs: drawn once, yet the same bytes as savefig(bbox_inches="tight") (issue 27)."""

import io

import pytest

from halluscope.analysis.severity import severity_plot
from halluscope.report.plots import DPI, png, pyplot, wer_cer_plot


def _panels():
    # titles, rotated tick labels, a legend placed 'best', an annotation sticking out and a colorbar: what the
    # tight box must take in
    fig, axes = pyplot().subplots(1, 2, figsize=(6, 3))
    axes[0].errorbar([0, 1, 2], [0.2, 0.5, 0.9], yerr=[0.05, 0.1, 0.05], marker="o", label="detector T")
    axes[0].set_xticks([0, 1, 2], ["minor", "moderate", "severe"], rotation=45)
    axes[0].set_title("a long panel title that runs wide")
    axes[0].legend(fontsize=7)
    axes[0].annotate("outside", (2, 0.9), xytext=(40, 30), textcoords="offset points")
    im = axes[1].imshow([[1, 2], [3, 4]], cmap="Blues")
    fig.colorbar(im, ax=axes[1])
    axes[1].set_ylabel("judge rating")
    return fig


@pytest.mark.parametrize("build", [_panels, lambda: pyplot().subplots(figsize=(2, 2))[0]])
def test_png_equals_savefig_tight(build):
    assert png(build()) == _tight(build)


def test_report_plots_equal_savefig_tight(monkeypatch):
    import halluscope.report.plots as plots

    asr = [{"language": "en", "wer": 0.12, "cer": 0.05}, {"language": "de", "wer": 0.2, "cer": 0.09}]
    rows = [
        {"language": "en", "type": t, "severity": s, "detector": "tfidf", "input": i, "rate": r}
        | {"rate_ci": (max(0, r - 0.1), min(1, r + 0.1))}
        for t in ("fabrication", "contradiction")
        for i in ("O", "T")
        for s, r in (("mild", 0.3), ("moderate", 0.6), ("severe", 0.9))
    ]
    ours = [wer_cer_plot(asr), severity_plot(rows, "en")]
    monkeypatch.setattr(plots, "png", _savefig_tight)
    assert ours == [wer_cer_plot(asr), severity_plot(rows, "en")]
    assert ours[1][:8] == b"\x89PNG\r\n\x1a\n"


def _savefig_tight(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    pyplot().close(fig)
    return buf.getvalue()


def _tight(build) -> bytes:
    return _savefig_tight(build())
