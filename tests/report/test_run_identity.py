"""One identity for models and runs (issue 24): zero-shot runs differing in any option are separate rows labelled
by what differs; a model's label is its display name (never a temporary path) in every table and the viewer.

Real 'detect' runs of the openai zero-shot detector against a scripted local chat server (tests/support)."""

import json

import pytest

from halluscope.core.runs import DetectConfig, latest_runs, variant_labels
from halluscope.core.spec import display_name
from halluscope.core.store import Store
from halluscope.report import write_report
from halluscope.spoken.build import load_build
from halluscope.spoken.detect import detect
from support import fakes
from support.chat_server import ChatServer, Reply


def _reply(req, n):
    return Reply(content='{"binary": "yes"}' if n % 3 else '{"binary": "no"}')


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Three zero-shot runs of one model named by a temporary path, differing in --system and -o subset, and a
    rerun of the first (which replaces it); a fourth model given a display name with -o name=."""
    root = tmp_path_factory.mktemp("identity")
    run_dir = fakes.spoken_run(root)
    model = f"openai/{root}/zs-model"  # a model named by a temporary path
    with ChatServer(_reply) as srv:
        base = {"base_url": srv.url, "max_retries": 0}
        for opts in (
            {"system": "Be brief."},
            {"system": "Be careful."},
            {"system": "Be brief.", "subset": 1},
            {"system": "Be brief."},
        ):
            detect(run_dir, detector=model, task="binary", input="text", options={**base, **opts})
        detect(run_dir, detector="openai/other", task="binary", input="text", options={**base, "name": "judge-free"})
    return run_dir, model, root


def test_runs_differing_in_any_option_are_rows_labelled_by_what_differs(run):
    from halluscope.spoken.report.zeroshot import zero_shot_rows

    run_dir, model, _ = run
    with Store(run_dir) as store:
        distinct = latest_runs(store, "detect", detector=model)
        rows = [r for r in zero_shot_rows(store, load_build(store)) if r["language"] == "all"]
    assert len(distinct) == 3  # the rerun replaced its earlier run; the other option sets stay
    labels = sorted(r["model"] for r in rows)
    assert labels == sorted(
        [
            "openai/zs-model [system=Be brief.]",
            "openai/zs-model [system=Be careful.]",
            "openai/zs-model [subset=1, system=Be brief.]",
            "judge-free",
        ]
    )
    by = {r["model"]: r for r in rows}
    assert by["openai/zs-model [subset=1, system=Be brief.]"]["n"] < by["openai/zs-model [system=Be brief.]"]["n"]


def test_variant_labels_name_only_the_keys_that_differ_within_a_model():
    a = DetectConfig(
        detector="x/a", task="binary", input="audio", options={"audio_policy": "chunk", "max_new_tokens": 6}
    )
    b = DetectConfig(
        detector="x/a", task="binary", input="audio", options={"audio_policy": "truncate", "max_new_tokens": 6}
    )
    c = DetectConfig(detector="x/b", task="binary", input="audio", options={"audio_policy": "skip"})
    assert variant_labels([a, b, c], group="detector", skip=("task", "input")) == [
        "audio_policy=chunk",
        "audio_policy=truncate",
        "",
    ]
    assert a.identity() != b.identity() and a.identity() == a.model_copy(update={"name": "shown"}).identity()
    # a run stored before the rename of -o max_new_tokens is the same run as its rerun under --max-tokens (one row)
    new = DetectConfig(detector="x/a", task="binary", input="audio", options={"audio_policy": "chunk", "max_tokens": 6})
    assert new.identity() == a.identity() and a.options == new.options
    d = DetectConfig(detector="x/a", task="binary", input="audio", options={"audio_policy": "chunk", "max_tokens": 9})
    assert variant_labels([new, d], group="detector", skip=("task", "input")) == ["max_tokens=6", "max_tokens=9"]


def test_no_table_plot_or_viewer_page_shows_a_temporary_path(run):
    from halluscope.view.data import load_view

    run_dir, model, _ = run
    write_report(run_dir)
    out = run_dir / "report"
    texts = [p.read_text(encoding="utf-8") for p in out.rglob("*") if p.suffix in (".md", ".csv", ".html", ".tex")]
    path = model.partition("/")[2]  # the model's temporary directory (the run's own folder is named, rightly)
    assert texts and not [t[:200] for t in texts if path in t]
    assert any("openai/zs-model [" in t for t in texts)
    view = load_view(run_dir)
    details = [view.detail(r["id"]) for r in view.index]
    for d in details:  # the raw reply is shown as the server sent it (this server echoes the model name)
        for p in d["predictions"]:
            p.pop("raw")
    shown = json.dumps([view.meta(), view.index, details])
    assert path not in shown, shown[shown.find(path) - 300 : shown.find(path) + 40]
    assert "openai/zs-model [" in shown
    # the full spec is kept in the JSON record of the run
    with Store(run_dir) as store:
        assert all(r.config.detector == model for r in latest_runs(store, "detect", detector=model))


def test_a_models_label_is_the_same_in_every_table_and_the_viewer(run):
    from halluscope.view.data import load_view

    run_dir, _, _ = run
    doc = json.loads((run_dir / "report" / "headline.json").read_text(encoding="utf-8"))
    tables = doc["tables"]
    cells = {r["model"] for r in tables["zeroshot_cells"]["rows"]}
    compact = {r["model"] for r in tables["zeroshot_table3"]["rows"]}
    assert cells == compact and "judge-free" in cells
    viewer = {r["detector"] for r in load_view(run_dir).runs}
    assert viewer == cells  # W/O and direct prompting: the viewer's run key is the label itself
    assert display_name("hf-audio//tmp/pytest-7/m/tiny?mitigation=aad") == "hf-audio/tiny"
    assert display_name("hf/Qwen/Qwen2-Audio-7B") == "hf/Qwen/Qwen2-Audio-7B"
    assert display_name("hf-audio//tmp/x/tiny?name=qwen2-audio&mitigation=vcd") == "qwen2-audio"
