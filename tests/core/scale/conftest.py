"""One local Ray cluster (2 CPUs) shared by the scale tests; started once, shut down at the end."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from support import pythonpath

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
HERE = Path(__file__).parent
_TEST_PATH = pythonpath(HERE)  # workers unpickle the tasks defined in these tests


@pytest.fixture(scope="session")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="pip install 'halluscope[ray]'")
    temp = tempfile.mkdtemp(prefix="hs-ray-t")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _temp_dir=temp,
        log_to_driver=False,
        logging_level="warning",
        runtime_env={"env_vars": {"HF_HUB_OFFLINE": "1", "PYTHONPATH": _TEST_PATH}},
    )
    yield ray
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)
