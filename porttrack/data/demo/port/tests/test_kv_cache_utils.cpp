// Ports tests/v1/core/test_kv_cache_utils.py @ @PIN@
#include <cassert>

#include "vllm/v1/core/kv_cache_utils.h"

void test_get_num_blocks() { assert(vllm::v1::get_num_blocks(1 << 20, 4096, 2) == 128); }
