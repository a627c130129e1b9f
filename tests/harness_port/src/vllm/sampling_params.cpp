// Present for the shape of the real port; nothing here is used by the harness.
namespace vllm {}
