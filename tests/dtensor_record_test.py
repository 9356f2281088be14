#!/usr/bin/env python3
# Test of tools/dtensor_record.py: records one redistribute on a fake process
# group and has check-sharding read the document back. Runs where PyTorch
# with DTensor is installed; elsewhere (no torch, a torch without
# torch.distributed, a broken install: the recorder's own torch_missing) it
# checks that the recorder refuses with exit status 2 and a one-line reason,
# then exits 77, which ctest reports as skipped (SKIP_RETURN_CODE).
# Usage: dtensor_record_test.py SOURCE_DIR CHECK_SHARDING
#
# This test does not judge DTensor's plan (corpus/dtensor does, on checked-in
# recordings); it checks that the recorder runs and writes a readable file.
import json
import os
import subprocess
import sys
import tempfile

source, check_sharding = sys.argv[1], sys.argv[2]
recorder = os.path.join(source, "tools", "dtensor_record.py")
sys.path.insert(0, os.path.dirname(recorder))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import dtensor_record  # noqa: E402 - found through the path set just above

why = dtensor_record.torch_missing()
if why:
    run = subprocess.run(
        [sys.executable, recorder, "--mesh", "2", "--shape", "4", "--src", "Shard(0)", "--dst", "R"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and why in run.stderr and "Traceback" not in run.stderr, run.stderr
    print("skipped: %s" % why)
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "case.json")
    subprocess.run(
        [sys.executable, recorder, "--mesh", "2", "--shape", "4,2",
         "--src", "Shard(0)", "--dst", "Replicate()", "-o", out],
        check=True,
    )
    doc = json.load(open(out))
    assert doc["format"] == "shardcheck-dtensor/1", doc
    kinds = [c["kind"] for c in doc["dtensor"]["collectives"]]
    assert kinds == ["all_gather"], kinds
    run = subprocess.run([check_sharding, out], capture_output=True, text=True)
    print(run.stdout)
    assert run.returncode == 0, run.stderr
    assert "Allgather" in run.stdout, run.stdout
print("ok")
