import pytest

from porttrack import globs


@pytest.mark.parametrize(
    "pattern, path, hit",
    [
        ("vllm/v1/kv_offload/**", "vllm/v1/kv_offload/worker/cpu.py", True),
        ("vllm/v1/kv_offload/**", "vllm/v1/kv_offload.py", False),
        ("vllm/**/utils.py", "vllm/utils.py", True),
        ("vllm/**/utils.py", "vllm/v1/worker/utils.py", True),
        ("vllm/*/utils.py", "vllm/v1/worker/utils.py", False),
        ("tests/test_?.py", "tests/test_a.py", True),
        ("tests/test_?.py", "tests/test_ab.py", False),
        ("third_party/**", "third_party/x/y.h", True),
    ],
)
def test_match(pattern, path, hit):
    assert globs.match(pattern, path) is hit
