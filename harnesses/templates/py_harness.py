#!/usr/bin/env python3
"""A conformance harness for `porttrack validate kv`, to copy into a Python port (docs/harness.md).

Fill in OPS with adapters: each takes the request's `args` (docs/protocol.md)
and returns the op's `result`, by calling the port's own code. List only the
ops the port really has; an input the port cannot express raises NotPorted
(reported apart from passes and failures); an error the port raises where
upstream raises ValueError propagates and is answered as "ValueError".
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

NAME = "my-port kv harness"  # what `validate kv` prints and `--record` stores
PROTOCOL = 1


class NotPorted(Exception):
    """The port has no way to express this input (a dtype, a spec kind, a wrapper it lacks)."""


# ---------------------------------------------------------------- adapters: edit here
#
# Example (a port whose config object answers the question):
#
#   from myport.kv import KVCacheConfig, spec_from_kind
#
#   def needs_kv_cache_zeroing(args: dict) -> dict:
#       layers = [spec_from_kind(s["kind"], s["block_size"]) for s in args["layers"]]
#       return {"needs_kv_cache_zeroing": KVCacheConfig(layers).needs_kv_cache_zeroing}
#
#   OPS = {"needs_kv_cache_zeroing": needs_kv_cache_zeroing}

OPS: dict[str, Callable[[dict], dict]] = {}


# ---------------------------------------------------------------- the protocol loop: leave as is


def reply(request: dict) -> dict:
    rid, op, args = request.get("id"), request.get("op"), request.get("args") or {}
    if op == "hello":
        return {"id": rid, "ok": True, "result": {"name": NAME, "protocol": PROTOCOL, "ops": sorted(OPS)}}
    try:
        if op not in OPS:
            raise NotPorted(f"op {op!r} is not listed in hello")
        return {"id": rid, "ok": True, "result": OPS[op](args)}
    except NotPorted as e:
        return {"id": rid, "ok": False, "error": "NotPorted", "message": str(e)}
    except (KeyError, TypeError) as e:
        return {"id": rid, "ok": False, "error": "BadRequest", "message": repr(e)}
    except Exception as e:  # noqa: BLE001 - the port's error where upstream raises ValueError
        return {"id": rid, "ok": False, "error": "ValueError", "message": str(e)}


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request: Any = json.loads(line)
            out = reply(request if isinstance(request, dict) else {})
        except ValueError as e:
            out = {"id": None, "ok": False, "error": "BadRequest", "message": str(e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()  # one reply per request, at once: porttrack waits for it
    return 0


if __name__ == "__main__":
    sys.exit(main())
