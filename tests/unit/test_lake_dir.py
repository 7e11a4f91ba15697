"""cdc_lakehouse.runtime.spark_session.ensure_lake_dir: the lake tree and its write check.

dbt with ``threads`` > 1 opens several connections at once, and each makes sure the lake
directory exists and is writable: the check must hold when threads run it together.
"""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Barrier, BrokenBarrierError

import pytest

from cdc_lakehouse.runtime.settings import ConfigError, load_settings
from cdc_lakehouse.runtime.spark_session import ensure_lake_dir


def test_creates_the_lake_tree(tmp_path: Path) -> None:
    settings = load_settings({"CDC_LAKE_DIR": str(tmp_path / "lake")})
    ensure_lake_dir(settings)
    assert settings.warehouse_dir.is_dir()
    assert settings.checkpoint_dir.is_dir()
    assert list(settings.lake_dir.glob(".write-probe*")) == []


def test_threads_checking_the_same_lake_at_once_all_pass(tmp_path: Path) -> None:
    settings = load_settings({"CDC_LAKE_DIR": str(tmp_path / "lake")})
    threads = 8
    barrier = Barrier(threads, timeout=30)

    def check(_: int) -> None:
        try:
            for _ in range(200):
                barrier.wait()
                ensure_lake_dir(settings)
        except Exception:
            barrier.abort()  # the other threads stop with BrokenBarrierError
            raise

    with ThreadPoolExecutor(threads) as pool:
        futures = [pool.submit(check, index) for index in range(threads)]
    errors = [
        repr(future.exception())
        for future in futures
        if future.exception() is not None and not isinstance(future.exception(), BrokenBarrierError)
    ]
    assert errors == []
    assert list(settings.lake_dir.glob(".write-probe*")) == []


def test_an_unwritable_lake_says_what_to_set(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    settings = load_settings({"CDC_LAKE_DIR": str(blocker / "lake")})
    with pytest.raises(ConfigError, match="set CDC_LAKE_DIR to a writable directory"):
        ensure_lake_dir(settings)
