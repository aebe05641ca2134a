from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def annotate_run_built(tmp_path_factory):
    """One scripted MISHAP run (clips -> questions -> rubrics -> answers, no judge) built once for the annotation
    app's HTTP tests; each module copies it (``annotate_run_copy``) so labels saved in one never reach another."""
    from support import scripted

    return scripted.build_run(tmp_path_factory.mktemp("annotate-built"), judge=False)


@pytest.fixture(scope="session")
def annotate_run_copy(annotate_run_built):
    """A function: a fresh copy of the built run under the given folder."""
    import shutil

    def copy(tmp: Path) -> Path:
        shutil.copytree(annotate_run_built, tmp / "run", ignore=shutil.ignore_patterns(".lock"))
        return tmp / "run"

    return copy
