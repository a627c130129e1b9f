"""A conformance harness backed by kvref itself, with switchable misbehaviour for the validator's tests.

usage: py_harness.py SEMANTICS|SWITCH+SWITCH+... [--ops a,b] [--crash-on ID] [--hang-on ID] [--garbage-on ID] [--no-hello]
"""

import argparse
import json
import sys
import time

from kvref import cases


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("semantics")
    ap.add_argument("--ops", default=",".join(cases.OPS))
    ap.add_argument("--crash-on", type=int, default=-1)
    ap.add_argument("--hang-on", type=int, default=-1)
    ap.add_argument("--garbage-on", type=int, default=-1)
    ap.add_argument("--no-hello", action="store_true")
    opt = ap.parse_args()
    # a preset or commit, or the switches a port has, which need not be a point of upstream history
    semantics = opt.semantics.split("+") if "+" in opt.semantics else opt.semantics
    for line in sys.stdin:
        req = json.loads(line)
        rid, op = req["id"], req["op"]
        if op == "hello":
            if opt.no_hello:
                print("hello yourself", flush=True)
                continue
            reply = {
                "id": rid,
                "ok": True,
                "result": {"name": "py_harness", "protocol": cases.PROTOCOL_VERSION, "ops": opt.ops.split(",")},
            }
        elif rid == opt.crash_on:
            print("boom: simulated crash", file=sys.stderr, flush=True)
            return 3
        elif rid == opt.hang_on:
            time.sleep(60)
            continue
        elif rid == opt.garbage_on:
            print("Segmentation fault? no, just noise", flush=True)
            continue
        else:
            reply = dict(
                cases.answer({"op": op, "args": req["args"]}, semantics)
                or {"ok": False, "error": "NotImplementedError", "message": "not at this semantics"}
            )
            reply["id"] = rid
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
