"""The Megatron tensor-parallel MLP block in PyTorch + torch.distributed.

The baseline of bench/megatron_mlp_bench.sh: the same computation as the plan
of corpus/bench_megatron_mlp_block.txt, written the way Megatron-LM writes it.
Each of the two ranks holds x [tokens, hidden] (replicated), its half of
w1 [ffn, hidden] by rows (column-parallel linear) and its half of
w2 [hidden, ffn] by columns (row-parallel linear), all bfloat16, and computes

    y = all_reduce(linear(gelu(linear(x, w1_local)), w2_local))

with F.gelu's exact (erf) form, as the plan's `gelu` is. The inputs are
uniform in [-1, 1), drawn in float32 and rounded to bfloat16 as run-plan's
are (--draw bfloat16: drawn in bfloat16). Per timed run:
synchronize, barrier, start the clock, run the block, synchronize, stop; the
median and minimum over --iters runs after --warmup are printed by rank 0 as
one line `torch-mlp median_ms=... min_ms=...` (plus the sizes and the GPU).
Then the same number of runs with a synchronization after every op, as
run-plan's synchronized runs make: `synced_median_ms` for the block and
`op_ms` (linear, gelu, linear, all_reduce) per op.

    torchrun --nproc_per_node 2 bench/megatron_mlp_torch.py \
        --tokens 8192 --hidden 8192 --ffn 32768 --warmup 5 --iters 20
"""

import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--hidden", type=int, default=8192)
    parser.add_argument("--ffn", type=int, default=32768)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument(
        "--draw",
        choices=["float32", "bfloat16"],
        default="float32",
        help="dtype torch.rand draws the uniform [-1, 1) inputs in before they are rounded "
        "to bfloat16: float32 (default) gives the values run-plan's generator gives; "
        "bfloat16 gives coarser values, on which the power-capped gemms clock higher",
    )
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    try:  # device_id (PyTorch >= 2.3) binds the communicator to this GPU.
        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    except TypeError:
        dist.init_process_group("nccl")
    world = dist.get_world_size()
    assert args.ffn % world == 0, "ffn must divide by the number of ranks"

    gen = torch.Generator(device="cuda").manual_seed(1 + dist.get_rank())
    shape_w1 = (args.ffn // world, args.hidden)
    shape_w2 = (args.hidden, args.ffn // world)
    draw = getattr(torch, args.draw)

    def uniform(*shape: int) -> torch.Tensor:
        values = torch.rand(*shape, device="cuda", dtype=draw, generator=gen) * 2 - 1
        return values.to(torch.bfloat16)

    x = uniform(args.tokens, args.hidden)
    w1 = uniform(*shape_w1)
    w2 = uniform(*shape_w2)

    def block() -> torch.Tensor:
        y = F.linear(F.gelu(F.linear(x, w1)), w2)
        dist.all_reduce(y)
        return y

    times = []
    for i in range(args.warmup + args.iters):
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        block()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(time.perf_counter() - start)

    ops = [
        lambda v: F.linear(x, w1),
        F.gelu,
        lambda v: F.linear(v, w2),
        lambda v: (dist.all_reduce(v), v)[1],
    ]
    synced, per_op = [], [[] for _ in ops]
    for i in range(args.warmup + args.iters):
        torch.cuda.synchronize()
        dist.barrier()
        start = time.perf_counter()
        v = None
        for k, op in enumerate(ops):
            op_start = time.perf_counter()
            v = op(v)
            torch.cuda.synchronize()
            if i >= args.warmup:
                per_op[k].append(time.perf_counter() - op_start)
        if i >= args.warmup:
            synced.append(time.perf_counter() - start)

    if dist.get_rank() == 0:
        op_ms = ",".join(f"{statistics.median(t) * 1e3:.3f}" for t in per_op)
        print(
            f"torch-mlp ranks={world} tokens={args.tokens} hidden={args.hidden} "
            f"ffn={args.ffn} iters={args.iters} warmup={args.warmup} "
            f"median_ms={statistics.median(times) * 1e3:.3f} min_ms={min(times) * 1e3:.3f} "
            f"synced_median_ms={statistics.median(synced) * 1e3:.3f} op_ms={op_ms} "
            f"torch={torch.__version__} gpu={torch.cuda.get_device_name()}",
            flush=True,
        )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
