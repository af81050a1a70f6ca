#!/usr/bin/env python3
"""A training step through the log semiring: ringmm.torch against the same model in plain torch
(issue 11: at 4096×4096, at least 5× faster, with equal gradients).

    python lab/python/training_step.py [--size 4096] [--reps 10] [--baseline-reps 5] [--chunk 32] [--out step.json]

The model: parameters x (M×K) and y (K×N), c[i, j] = log Σ_k exp(x[i, k] + y[k, j]), loss = mean(c ⊙ w)
for a fixed random w; a step is the forward pass and the backward pass (M = K = N = --size, f32).
  ringmm      ringmm.torch.matmul(x, y, "log_plus")
  torch       broadcast-and-logsumexp: (x[:, :, None] + y[None]).logsumexp(1). At 4096 the
              (M, K, N) tensor would take 256 GiB, so the rows go in chunks of --chunk (a
              (chunk, K, N) tensor: 2 GiB at 32 rows), each checkpointed (recomputed in the
              backward pass) so that one chunk's tensors live at a time.
Each step is timed with CUDA events, median of --reps (--baseline-reps for torch, whose step takes
seconds) after one warm-up step. The gradients of both are compared (max |difference| over max |gradient|).
Needs a CUDA device, torch, and the package built with its CUDA backend; exits with an error otherwise.
"""

import argparse

from common import event_seconds, median, print_table, print_targets, record, require_cuda, target, write_results

LIMIT_SPEEDUP = 5.0
GRADIENT_TOLERANCE = 1e-4  # max |difference| / max |gradient|, f32 (both sum 4096 terms)


def ringmm_loss(x, y, w):
    import ringmm.torch

    return (ringmm.torch.matmul(x, y, "log_plus") * w).mean()


def torch_loss(x, y, w, chunk):
    import torch
    from torch.utils.checkpoint import checkpoint

    def rows(x_rows, w_rows):
        return ((x_rows[:, :, None] + y[None]).logsumexp(dim=1) * w_rows).sum()

    total = sum(checkpoint(rows, x[r:r + chunk], w[r:r + chunk], use_reentrant=False)
                for r in range(0, x.shape[0], chunk))
    return total / torch.tensor(w.numel(), dtype=w.dtype, device=w.device)


def step(loss, x, y, *args):
    """One training step: gradients zeroed, forward, backward; returns the loss."""
    x.grad = y.grad = None
    value = loss(x, y, *args)
    value.backward()
    return value


def compare(torch, size, chunk, device):
    """Both models on the same parameters: the loss difference and each gradient's relative error."""
    generator = torch.Generator(device=device).manual_seed(11)
    x = torch.randn(size, size, device=device, generator=generator).requires_grad_()
    y = torch.randn(size, size, device=device, generator=generator).requires_grad_()
    w = torch.randn(size, size, device=device, generator=generator)
    ours = step(ringmm_loss, x, y, w).item()
    grads = x.grad, y.grad
    theirs = step(torch_loss, x, y, w, chunk).item()
    errors = [((g - h).abs().max() / h.abs().max()).item() for g, h in zip(grads, (x.grad, y.grad))]
    return {"loss_ringmm": ours, "loss_torch": theirs, "grad_x_error": errors[0], "grad_y_error": errors[1]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--baseline-reps", type=int, default=5)
    parser.add_argument("--chunk", type=int, default=32, help="rows per chunk of the torch model")
    parser.add_argument("--out", help="results file (.json)")
    args = parser.parse_args()
    torch = require_cuda()

    n = args.size
    agreement = compare(torch, n, args.chunk, "cuda")
    x = torch.randn(n, n, device="cuda", requires_grad=True)
    y = torch.randn(n, n, device="cuda", requires_grad=True)
    w = torch.randn(n, n, device="cuda")
    ours = median(event_seconds(torch, lambda i: step(ringmm_loss, x, y, w), args.reps, warmup=1))
    torch.cuda.reset_peak_memory_stats()
    theirs = median(event_seconds(torch, lambda i: step(torch_loss, x, y, w, args.chunk), args.baseline_reps,
                                  warmup=1))
    baseline_memory = torch.cuda.max_memory_allocated()

    product = dict(semiring="log-plus", product="training step")
    records = [record("ringmm.torch log_plus, forward+backward", torch, n, n, n, ours, **product, **agreement),
               record(f"torch broadcast+logsumexp (chunks of {args.chunk} rows, checkpointed), forward+backward",
                      torch, n, n, n, theirs, **product, max_memory_bytes=baseline_memory)]
    speedup = theirs / ours
    worst = max(agreement["grad_x_error"], agreement["grad_y_error"])
    targets = [target(f"training step speed-up over torch at {n}x{n}", speedup, LIMIT_SPEEDUP, "x",
                      speedup >= LIMIT_SPEEDUP),
               target("gradients: max |ringmm - torch| / max |torch|", worst, GRADIENT_TOLERANCE, "",
                      worst <= GRADIENT_TOLERANCE)]
    print(f"log-plus training step, x, y {n}x{n} f32, on {torch.cuda.get_device_name()}; "
          f"median of {args.reps} (ringmm) and {args.baseline_reps} (torch) steps")
    print_table(["model", "ms/step", "speed-up"],
                [[r["kernel"], f"{r['seconds'] * 1e3:.1f}", f"{theirs / r['seconds']:.1f}"] for r in records])
    print(f"loss: ringmm {agreement['loss_ringmm']:.7g}, torch {agreement['loss_torch']:.7g}; gradient errors "
          f"x {agreement['grad_x_error']:.2e}, y {agreement['grad_y_error']:.2e}")
    print_targets(targets)
    write_results(args.out, "training_step", torch, records, targets)


if __name__ == "__main__":
    main()
