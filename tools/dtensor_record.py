#!/usr/bin/env python3
# dtensor_record.py: runs one PyTorch DTensor redistribute (or a batch of
# them) on a fake process group under CommDebugMode and writes what DTensor
# did as a shardcheck DTensor document (docs/dtensor.md,
# "format": "shardcheck-dtensor/1"), which `check-sharding FILE` then judges.
#
# Every rank of the mesh is run in a child process of its own (a fake process
# group plays one rank: its collectives move no data but have the shapes and
# groups DTensor gives them), so the document holds each rank's group and
# buffer shapes for every collective, in issue order, and DTensor's own
# steps (its transform infos: one mesh dim changing per step) with the
# collectives each step issued.
#
# Usage (one transition; placements as DTensor prints or spells them):
#   python3 tools/dtensor_record.py --mesh 2x2 --shape 8,6 \
#       --src 'Shard(0),Replicate()' --dst 'Replicate(),Shard(1)' -o case.json
# A batch: --cases FILE.json (a list of {"name", "mesh", "shape", "src",
# "dst", "dtype", "device"}) with --outdir DIR writes DIR/NAME.json per case.
# --device cuda (a case's "device") builds the mesh on CUDA, so that DTensor
# takes its CUDA paths (an all_to_all for Shard(a) -> Shard(b), where the CPU
# path gathers); every rank's child then uses the first GPU, and the fake
# process group still moves no data.
#
# This script does not check anything (check-sharding does), needs nothing
# beyond the Python standard library and PyTorch, touches a GPU only with --device
# cuda, never the network, and does not install anything. It relies on DTensor internals
# (_gen_transform_infos, the functional collectives' argument order) that
# change between PyTorch versions; what it cannot read it writes as an
# "error" of that case rather than guessing.
import argparse
import json
import os
import re
import subprocess
import sys

FORMAT = "shardcheck-dtensor/1"

# Functional-collective names (torch.ops._c10d_functional, c10d, _dtensor)
# -> the document's collective kinds.
KINDS = [
    ("shard_dim_alltoall", "all_to_all"),
    ("all_to_all", "all_to_all"),
    ("alltoall", "all_to_all"),
    ("all_gather", "all_gather"),
    ("allgather", "all_gather"),
    ("reduce_scatter", "reduce_scatter"),
    ("all_reduce", "all_reduce"),
    ("allreduce", "all_reduce"),
    ("broadcast", "broadcast"),
    ("scatter", "scatter"),
    ("gather", "gather"),
]


def torch_missing():
    """Why this Python cannot record (no PyTorch, or one without the
    distributed pieces the recorder uses), or None when it can."""
    try:
        import torch.distributed as dist

        if not dist.is_available():
            return "this PyTorch is built without torch.distributed"
        from torch.distributed.tensor import DTensor  # noqa: F401
        from torch.distributed.tensor.debug import CommDebugMode  # noqa: F401
        from torch.testing._internal.distributed.fake_pg import FakeStore  # noqa: F401
    except Exception as e:  # ImportError, or a broken install's OSError
        return "PyTorch with DTensor cannot be imported (%s: %s)" % (type(e).__name__, e)
    return None


def parse_mesh(text):
    return [int(s) for s in text.lower().split("x")]


def parse_shape(text):
    return [int(s) for s in text.split(",") if s.strip()]


def split_placements(text):
    """'Shard(0),_StridedShard(0, split_factor=2)' -> the placements' spellings."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def placement_of(spelling):
    from torch.distributed.tensor import Partial, Replicate, Shard

    s = spelling.replace(" ", "")
    m = re.fullmatch(r"(?:Shard|S)\((\d+)\)", s)
    if m:
        return Shard(int(m.group(1)))
    if s in ("R", "Replicate()", "Replicate"):
        return Replicate()
    m = re.fullmatch(r"(?:Partial|P)(?:\((\w*)\))?", s)
    if m:
        return Partial(m.group(1) or "sum")
    m = re.fullmatch(r"(?:_StridedShard|_S)\((\d+),(?:split_factor=)?(\d+)\)", s)
    if m:
        from torch.distributed.tensor.placement_types import _StridedShard

        return _StridedShard(int(m.group(1)), split_factor=int(m.group(2)))
    raise ValueError("unknown placement " + repr(spelling))


def spelled(p):
    """A placement as the document spells it (docs/dtensor.md)."""
    name = type(p).__name__
    if name == "_StridedShard":
        return "_StridedShard(%d, split_factor=%d)" % (p.dim, p.split_factor)
    if name == "Shard":
        return "Shard(%d)" % p.dim
    if name == "Replicate":
        return "Replicate()"
    if name in ("Partial", "_Partial", "_NormPartial"):
        return "Partial(%s)" % getattr(p, "reduce_op", "sum")
    return str(p)


def kind_of(op_name):
    for needle, kind in KINDS:
        if needle in op_name:
            return kind
    return op_name


def group_ranks(args):
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group

    for a in reversed(args):
        if isinstance(a, str):
            try:
                return dist.get_process_group_ranks(_resolve_process_group(a))
            except Exception:  # noqa: BLE001 - a string that is no group name
                continue
    return None


def reduce_op_of(kind, args):
    if kind not in ("all_reduce", "reduce_scatter"):
        return None
    for a in args[1:]:
        if isinstance(a, str) and a.lower() in ("sum", "avg", "max", "min", "product", "premul_sum"):
            return a.lower()
    return None


def make_recorder():
    import torch
    from torch.distributed.tensor.debug import CommDebugMode

    class Recorder(CommDebugMode):
        """CommDebugMode that also keeps each collective's group and shapes."""

        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            before = sum(self.comm_counts.values())
            out = super().__torch_dispatch__(func, types, args, kwargs)
            if out is NotImplemented or sum(self.comm_counts.values()) == before:
                return out
            name = str(func._overloadpacket)
            kind = kind_of(name)
            first = out[0] if isinstance(out, (list, tuple)) else out
            self.calls.append(
                {
                    "op": name,
                    "kind": kind,
                    "reduce_op": reduce_op_of(kind, list(args)),
                    "group": group_ranks(list(args)),
                    "input_shape": list(args[0].shape) if isinstance(args[0], torch.Tensor) else None,
                    "output_shape": list(first.shape) if isinstance(first, torch.Tensor) else None,
                }
            )
            return out

    return Recorder


def source_dtensor(case, mesh):
    """The source DTensor on this rank, without any collective."""
    import torch
    from torch.distributed.tensor import DTensor, Replicate, distribute_tensor

    shape = case["shape"]
    full = torch.arange(1, 1 + torch.Size(shape).numel(), dtype=torch.float32).reshape(shape)
    full = full.to(mesh.device_type)
    src = [placement_of(p) for p in split_placements(case["src"])]
    plain = [Replicate() if spelled(p).startswith("Partial") else p for p in src]
    try:
        d = distribute_tensor(full, mesh, plain, src_data_rank=None)
    except TypeError:  # versions before src_data_rank
        d = distribute_tensor(full, mesh, plain)
    if plain == src:
        return d
    return DTensor.from_local(d.to_local(), mesh, src, run_check=False, shape=full.shape, stride=full.stride())


def transform_steps(src_spec, dst_spec):
    from torch.distributed.tensor import _redistribute as r

    gen = getattr(r, "_gen_transform_infos_non_cached", None) or r._gen_transform_infos
    try:
        infos = gen(src_spec, dst_spec)
    except TypeError:
        infos = gen(src_spec, dst_spec, None, None)
    return [
        {"mesh_dim": int(i.mesh_dim), "from": spelled(i.src_dst_placements[0]), "to": spelled(i.src_dst_placements[1])}
        for i in infos
    ]


def run_case_on_rank(case, rank):
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh(case.get("device", "cpu"), tuple(case["mesh"]))
    src = source_dtensor(case, mesh)
    dst = [placement_of(p) for p in split_placements(case["dst"])]
    result = {"rank": rank}
    try:
        from torch.distributed.tensor._dtensor_spec import DTensorSpec

        target_spec = DTensorSpec(mesh, tuple(dst), tensor_meta=src._spec.tensor_meta)
        result["steps"] = transform_steps(src._spec, target_spec)
    except Exception as e:  # noqa: BLE001 - internals differ per version
        result["steps_error"] = "%s: %s" % (type(e).__name__, e)
    recorder = make_recorder()()
    with recorder:
        out = src.redistribute(mesh, dst)
    result["calls"] = recorder.calls
    result["comm_counts"] = {str(k): v for k, v in recorder.get_comm_counts().items()}
    result["src_local_shape"] = list(src.to_local().shape)
    result["dst_local_shape"] = list(out.to_local().shape)
    result["dst_placements"] = [spelled(p) for p in out.placements]
    return result


def child_main(rank, world, cases_path):
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    with open(cases_path) as f:
        cases = json.load(f)
    dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
    results = []
    for case in cases:
        try:
            results.append(run_case_on_rank(case, rank))
        except Exception as e:  # noqa: BLE001 - kept as the case's error
            results.append({"rank": rank, "error": "%s: %s" % (type(e).__name__, e)})
    dist.destroy_process_group()
    # A file, not stdout: torch may print there.
    with open("%s.rank%d" % (cases_path, rank), "w") as f:
        json.dump(results, f)


def product(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def merge_collectives(per_rank):
    """Per-rank call lists -> the document's collectives (one per issue)."""
    counts = {len(r["calls"]) for r in per_rank}
    if len(counts) != 1:
        raise ValueError("ranks issued different numbers of collectives: %s" % sorted(counts))
    merged = []
    for i in range(counts.pop()):
        calls = [r["calls"][i] for r in per_rank]
        kinds = {c["kind"] for c in calls}
        if len(kinds) != 1:
            raise ValueError("collective %d differs in kind across ranks: %s" % (i, sorted(kinds)))
        merged.append(
            {
                "kind": calls[0]["kind"],
                "op": calls[0]["op"],
                "reduce_op": calls[0]["reduce_op"],
                "ranks": [
                    {"rank": r["rank"], "group": c["group"], "input_shape": c["input_shape"], "output_shape": c["output_shape"]}
                    for r, c in zip(per_rank, calls)
                ],
            }
        )
    return merged


COMM_FREE = {("Replicate", "Shard"), ("Replicate", "Partial"), ("Replicate", "_StridedShard")}


def attach_to_steps(steps, collectives):
    """Each step that needs communication takes the next collective, in order."""
    def head(s):
        return s.split("(")[0]

    needing = [s for s in steps if (head(s["from"]), head(s["to"])) not in COMM_FREE]
    for s in steps:
        s["collectives"] = []
    if len(needing) == len(collectives):
        for i, s in enumerate(needing):
            s["collectives"] = [i]
    return len(needing)


def document(case, per_rank, torch_version):
    doc = {
        "format": FORMAT,
        "name": case["name"],
        "mesh": {"shape": case["mesh"], "devices": list(range(product(case["mesh"])))},
        "tensor": {"shape": case["shape"], "dtype": case.get("dtype", "float32")},
        "notes": ["Recorded by tools/dtensor_record.py on %s." % case.get("device", "cpu")],
        "source": {"placements": [spelled_text(p) for p in split_placements(case["src"])]},
        "target": {"placements": [spelled_text(p) for p in split_placements(case["dst"])]},
    }
    errors = [r.get("error") or r.get("steps_error") for r in per_rank if r.get("error") or r.get("steps_error")]
    if errors:
        doc["recorder_error"] = errors[0]
        if any(r.get("error") for r in per_rank):
            return doc
    issued = {"recorder": "tools/dtensor_record.py", "torch_version": torch_version, "rank_views": len(per_rank)}
    collectives = merge_collectives(per_rank)
    steps = per_rank[0].get("steps", [])
    needing = attach_to_steps(steps, collectives)
    if needing != len(collectives):
        doc["recorder_error"] = "%d collectives for %d steps needing communication" % (len(collectives), needing)
    issued["steps"] = steps
    issued["collectives"] = collectives
    issued["comm_counts"] = per_rank[0]["comm_counts"]
    doc["dtensor"] = issued
    return doc


def spelled_text(text):
    import torch  # noqa: F401 - placement_of imports torch's DTensor

    return spelled(placement_of(text))


def record(cases):
    """Runs every case on every rank (one child process per rank)."""
    import tempfile

    import torch

    world = max(product(c["mesh"]) for c in cases)
    for c in cases:
        if product(c["mesh"]) != world:
            raise SystemExit("dtensor_record.py: one batch takes one device count (got %s)" % c["mesh"])
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cases, f)
        path = f.name
    children = [
        subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", str(r), str(world), path])
        for r in range(world)
    ]
    per_rank = []
    for r, child in enumerate(children):
        if child.wait() != 0:
            raise SystemExit("dtensor_record.py: the child of rank %d failed (exit %d)" % (r, child.returncode))
        with open("%s.rank%d" % (path, r)) as f:
            per_rank.append(json.load(f))
        os.unlink("%s.rank%d" % (path, r))
    os.unlink(path)
    return [document(c, [per_rank[r][i] for r in range(world)], torch.__version__) for i, c in enumerate(cases)]


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child_main(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return
    ap = argparse.ArgumentParser(description="Record a DTensor redistribute for check-sharding.")
    ap.add_argument("--mesh", help="mesh shape, e.g. 4 or 2x2")
    ap.add_argument("--shape", help="global tensor shape, e.g. 8,6")
    ap.add_argument("--src", help="source placements, e.g. 'Shard(0),Replicate()'")
    ap.add_argument("--dst", help="target placements")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="the mesh's device type (default: cpu)")
    ap.add_argument("-o", "--output", help="output file (one case)")
    ap.add_argument("--cases", help="a JSON list of cases (batch)")
    ap.add_argument("--outdir", help="output folder (batch)")
    a = ap.parse_args()
    if not a.cases and not (a.mesh and a.shape and a.src and a.dst):
        ap.error("give --mesh, --shape, --src and --dst (or --cases)")
    why = torch_missing()
    if why:
        sys.stderr.write("dtensor_record.py: %s; it needs Python 3 and PyTorch with DTensor only (the recordings of corpus/dtensor were made with 2.11)\n" % why)
        sys.exit(2)
    if a.cases:
        with open(a.cases) as f:
            cases = json.load(f)
        for c in cases:
            c["mesh"] = parse_mesh(c["mesh"]) if isinstance(c["mesh"], str) else c["mesh"]
            c["shape"] = parse_shape(c["shape"]) if isinstance(c["shape"], str) else c["shape"]
        groups = {}
        for c in cases:
            groups.setdefault(product(c["mesh"]), []).append(c)
        os.makedirs(a.outdir or ".", exist_ok=True)
        for batch in groups.values():
            for doc in record(batch):
                with open(os.path.join(a.outdir or ".", doc["name"] + ".json"), "w") as f:
                    json.dump(doc, f, indent=1)
                    f.write("\n")
        return
    case = {"name": "case", "mesh": parse_mesh(a.mesh), "shape": parse_shape(a.shape), "src": a.src, "dst": a.dst, "dtype": a.dtype, "device": a.device}
    doc = record([case])[0]
    text = json.dumps(doc, indent=1) + "\n"
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
