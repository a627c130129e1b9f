"""The suite's own set-up: what its speed depends on, checked so it cannot silently stop."""

import pytest


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
