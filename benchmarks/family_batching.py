"""Is training an attacker family as one batched model faster here than training its members one by one?

Times one Adam step of K SmallCNNs (the farm's attacker network) on batches of B images three ways: one after another
(as ``attacks/attackers/tuning.py`` trains them), as one ``torch.func`` model (``stack_module_state`` + ``functional_call`` under
``vmap``, one backward through the stacked forward), and with ``vmap(grad)``. Prints milliseconds per step and the
speed-up over one-by-one. Run it on the device you sweep on (``--device cuda`` on a GPU): on CPU, where a convolution
already keeps a core busy, batching adds work (grouped convolutions) instead of removing launch overhead.

    PYTHONPATH=. .venv/bin/python benchmarks/family_batching.py --members 4,8 --batch 64 --threads 1
"""
from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable

import torch
from torch.func import functional_call, grad_and_value, stack_module_state, vmap
from torch.nn import functional as F

from core.nets import SmallCNN


def per_step(step: Callable[[], None], device: torch.device, repeats: int) -> float:
    """Milliseconds per call of ``step`` after a warm-up."""
    for _ in range(5):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeats):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / repeats * 1000


def timings(members: int, batch: int, width: int, device: torch.device, repeats: int) -> dict[str, float]:
    """ms per step: one by one, one batched model (autograd through vmap), vmap(grad)."""
    models = [SmallCNN(2, width).to(device) for _ in range(members)]
    x = torch.rand(members, batch, 1, 28, 28, device=device)
    y = torch.randint(0, 2, (members, batch), device=device)
    opts = [torch.optim.Adam(m.parameters(), 1e-3) for m in models]

    def one_by_one() -> None:
        for k, model in enumerate(models):
            loss = F.cross_entropy(model(x[k]), y[k])
            opts[k].zero_grad()
            loss.backward()
            opts[k].step()

    params, buffers = stack_module_state(models)  # type: ignore[arg-type]
    base = copy.deepcopy(models[0]).to("meta")
    stacked = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    opt = torch.optim.Adam(list(stacked.values()), 1e-3)
    forward = vmap(lambda p, b, xx: functional_call(base, (p, b), (xx,)))

    def batched() -> None:
        loss = F.cross_entropy(forward(stacked, buffers, x).flatten(0, 1), y.flatten(), reduction="sum") / batch
        opt.zero_grad()
        loss.backward()
        opt.step()

    plain = {k: v.detach().clone() for k, v in params.items()}
    opt_g = torch.optim.Adam(list(plain.values()), 1e-3)
    grads_of = vmap(grad_and_value(lambda p, b, xx, yy: F.cross_entropy(functional_call(base, (p, b), (xx,)), yy)))

    def vmap_grad() -> None:
        grads, _ = grads_of(plain, buffers, x, y)
        for k, p in plain.items():
            p.grad = grads[k]
        opt_g.step()

    return {name: per_step(step, device, repeats)
            for name, step in (("one by one", one_by_one), ("batched", batched), ("vmap(grad)", vmap_grad))}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--members", default="4,8", help="family sizes K, comma-separated")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--width", type=int, default=16, help="SmallCNN base width")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--repeats", type=int, default=30)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    for members in (int(k) for k in args.members.split(",")):
        t = timings(members, args.batch, args.width, device, args.repeats)
        base = t["one by one"]
        print(f"K={members} B={args.batch} width {args.width} on {device} ({args.threads} thread(s)): "
              + ", ".join(f"{k} {v:.1f} ms ({base / v:.2f}×)" for k, v in t.items()), flush=True)


if __name__ == "__main__":
    main()
