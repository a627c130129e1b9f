"""The suite's own set-up: what its speed depends on, checked so it cannot silently stop."""

import pytest
from hypothesis import given, strategies as st


@pytest.mark.xdist_group("suite-setup")
def test_xdist_groups_keep_a_build_on_one_worker(request):
    # the C++ harness and demo fixtures are built once only while xdist honours these groups
    config = request.config
    if not hasattr(config, "workerinput") or not getattr(config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@suite-setup"), (
        f"pytest-xdist ignored this test's xdist_group ({request.node.nodeid}): this pytest breaks "
        "--dist loadgroup (pytest-dev/pytest-xdist#1386), see the test extra in pyproject.toml"
    )


@given(st.integers())
def test_hypothesis_tests_share_one_worker(request, n):
    # each worker that runs one builds hypothesis's caches again (tests/conftest.py)
    if not getattr(request.config.option, "loadgroup", False) or not hasattr(request.config, "workerinput"):
        return
    assert request.node.nodeid.endswith("@hypothesis"), request.node.nodeid


def test_scratch_goes_to_memory_only_where_nobody_chose_and_there_is_room(tmp_path):
    import os

    from conftest import scratch_root

    assert scratch_root({}, shm=tmp_path) == tmp_path  # a roomy, writable folder
    assert scratch_root({"TMPDIR": "/somewhere"}, shm=tmp_path) is None  # the user's choice stands
    assert scratch_root({}, shm=tmp_path / "missing") is None
    assert scratch_root({}, shm=tmp_path, needed=2**62) is None  # too small
    (tmp_path / "ro").mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes anywhere
        assert scratch_root({}, shm=tmp_path / "ro") is None
    root = scratch_root(dict(os.environ))
    if root is not None:
        assert tmp_path.is_relative_to(root), f"{tmp_path} is not under {root}"


@pytest.fixture(scope="session")
def cache_seen_by_a_session_fixture() -> str | None:
    import os

    return os.environ.get("PORTTRACK_CACHE_DIR")


def test_session_fixtures_never_use_the_users_cache(cache_seen_by_a_session_fixture, tmp_path_factory):
    """Session fixtures run porttrack (the audited demo pair, built trees): they get the suite's cache
    folder, never the user's, where a run of theirs could meet the user's own runs."""
    assert cache_seen_by_a_session_fixture == str(tmp_path_factory.getbasetemp() / "cache")
