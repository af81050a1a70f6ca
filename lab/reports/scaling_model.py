#!/usr/bin/env python3
"""Alpha-beta performance model of ringmm's distributed SUMMA and blocked APSP, calibrated on measured records.

    python3 lab/reports/scaling_model.py --summa FILE.jsonl [...] [--apsp FILE.jsonl ...] [--curve FILE.jsonl ...]
                                         [--markdown OUT.md] [--json OUT.json] [network and size options]

The model (docs/distributed.md, "A model of larger machines", explains it): a SUMMA step multiplies the local product at the rate the
bench records give for its shape, anchored on the 1x1 SUMMA record, while the next step's panels move (lookahead 1);
a transfer costs hops * alpha + bytes / beta. The NVLink alpha and beta and the overlap factor eta are fitted on the
multi-GPU records; a fit on the 1- and 2-GPU records alone predicts the larger runs as a check. The fragment printed
(and written to --markdown) has the parameters, the check and the predictions for 64 to 1024 GPUs.
"""
import argparse
import json
import math
import pathlib
from dataclasses import dataclass, field, replace

import numpy as np

import campaigns

ELEMENT_BYTES = {"f32": 4, "f64": 8, "i32": 4, "i16x2": 4, "u8": 1}
TWIN = {"max-plus": "min-plus", "min-plus": "max-plus"}  # tropical pairs run the same kernels at the same rates
SUMMA_KEYS = ("ranks", "grid_rows", "grid_cols", "n", "block", "variant", "semiring", "type", "seconds")
APSP_KEYS = ("ranks", "grid_rows", "grid_cols", "n", "block", "seconds", "type")
REFERENCE = ("Published reference, not computed here: the best multi-GPU APSP reached about 80% parallel efficiency "
             "on 256 Summit nodes (Sao et al., HPDC 2021: 8.1 PFLOP/s on 1536 V100s, about 2.7e12 updates/s per V100).")
# Fit grids: wide enough that an edge hit means "not constrained by the records", not "wrong range".
ALPHA_GRID = np.logspace(-7, -3, 33)     # 0.1 us .. 1 ms
BETA_GRID = np.logspace(9, 13, 41)       # 1 GB/s .. 10 TB/s
ETA_GRID = np.linspace(0.5, 1.1, 601)
CHI2_1DOF_95, CHI2_2DOF_95 = 3.841, 5.991  # 95% quantiles of chi-squared with 1 and 2 degrees of freedom


@dataclass(frozen=True)
class Network:
    """Links of one GPU: NVLink inside a node, InfiniBand between nodes (alpha in s per hop, beta in bytes/s)."""
    nvlink_alpha: float
    nvlink_beta: float
    ib_alpha: float
    ib_beta: float
    gpus_per_node: int


@dataclass(frozen=True)
class Comm:
    """A step's transfers: hops * alpha + nbytes / beta on NVLink (kept symbolic so that the fit can vary alpha
    and beta) plus `fixed` seconds on the inter-node links, whose parameters are assumptions."""
    hops: float = 0.0
    nbytes: float = 0.0
    fixed: float = 0.0

    def __add__(self, other):
        return Comm(self.hops + other.hops, self.nbytes + other.nbytes, self.fixed + other.fixed)

    def time(self, alpha, beta):
        return self.hops * alpha + self.nbytes / beta + self.fixed


def broadcast(nbytes, q, across_nodes, variant, net):
    """One panel to a group of q ranks, as the farthest rank sees it. Broadcast: NCCL's pipelined tree, ceil(log2 q)
    latencies and the bytes once. Ring: q - 1 hops, each forwarding the whole panel once it has arrived (dist's
    move_panel receives, then sends), so the bytes q - 1 times. Free when q = 1: the owner already has it."""
    if q <= 1:
        return Comm()
    hops = q - 1 if variant == "ring" else math.ceil(math.log2(q))
    carried = nbytes * hops if variant == "ring" else nbytes
    if across_nodes:
        return Comm(fixed=hops * net.ib_alpha + carried / net.ib_beta)
    return Comm(hops=hops, nbytes=carried)


def near_square_grid(p):
    """dist::near_square_grid: pr <= pc with pr the divisor of p closest to sqrt(p)."""
    pr = max(d for d in range(1, math.isqrt(p) + 1) if p % d == 0)
    return pr, p // pr


def spans_nodes(pr, pc, gpus_per_node):
    """Whether some process row, and some process column, holds ranks of more than one node. Rank r sits at
    (r / pc, r mod pc) and ranks are numbered node by node, so a row stays in a node when pc divides the GPUs per
    node."""
    def split(groups):
        return any(len({r // gpus_per_node for r in g}) > 1 for g in groups)
    rows = [range(i * pc, (i + 1) * pc) for i in range(pr)]
    cols = [range(j, pr * pc, pc) for j in range(pc)]
    return split(rows), split(cols)


def local_extent(size, block, parts):
    """The largest local extent of a block-cyclic dimension: the rank with the most blocks sets the pace."""
    blocks = math.ceil(size / block)
    return min(size, math.ceil(blocks / parts) * block)


class Curve:
    """log2 of a local product's rate as a function of log2 (m, n, k), from bench records of one semiring, type and
    product. A query is clamped into the records' range (rates saturate beyond the largest product measured) and
    interpolated by inverse squared distance over the records within `radius` octaves; farther means unknown."""

    def __init__(self, records, radius):
        by_shape = {}
        for r in records:
            shape = (math.log2(r["m"]), math.log2(r["n"]), math.log2(r["k"]))
            by_shape.setdefault(shape, []).append(math.log2(r["updates_per_s"]))
        self.points = np.array(sorted(by_shape))
        self.values = np.array([np.mean(by_shape[s]) for s in sorted(by_shape)])
        self.radius = radius

    def log_rate(self, shape):
        query = np.clip(np.log2(np.maximum(shape, 1)), self.points.min(0), self.points.max(0))
        d = np.linalg.norm(self.points - query, axis=1)
        if d.min() < 1e-9:
            return float(self.values[d.argmin()])
        near = d <= self.radius
        if not near.any():
            return None
        w = 1.0 / d[near] ** 2
        return float(np.sum(w * self.values[near]) / np.sum(w))

    def ratio(self, shape, anchor):
        """rate(shape) / rate(anchor), 1 when either has no record near it."""
        a, b = self.log_rate(shape), self.log_rate(anchor)
        return 1.0 if a is None or b is None else 2.0 ** (a - b)


@dataclass(frozen=True)
class RateModel:
    """Updates/s of a local (m, n, k) product: a measured rate at its anchor shape (a 1x1 SUMMA step) times the
    curve's ratio, so the curve (often from another machine) gives only the shape dependence."""
    rate: float
    anchor: tuple
    curve: Curve = None
    source: str = ""

    def __call__(self, m, n, k):
        return self.rate * (self.curve.ratio((m, n, k), self.anchor) if self.curve else 1.0)


@dataclass(frozen=True)
class SummaSteps:
    """A SUMMA run as its steps: full-width steps and a last one, each a local product and its panels' transfers."""
    steps: int
    compute_full: float
    compute_last: float
    comm_full: Comm
    comm_last: Comm

    def time(self, alpha, beta, eta=1.0):
        """Lookahead 1: step s's product overlaps step s+1's transfers, so a step costs max(compute, comm), the first
        step's transfer is exposed and the last product is not overlapped. Vectorises over array alpha, beta, eta."""
        p_full, p_last = self.compute_full / eta, self.compute_last / eta
        c_full, c_last = self.comm_full.time(alpha, beta), self.comm_last.time(alpha, beta)
        if self.steps == 1:
            return c_last + p_last
        return c_full + (self.steps - 2) * np.maximum(p_full, c_full) + np.maximum(p_full, c_last) + p_last

    def compute(self, eta=1.0):
        """Seconds of the local products alone."""
        return ((self.steps - 1) * self.compute_full + self.compute_last) / eta


def summa_steps(m, n, k, pr, pc, nb, variant, elem, rate, net):
    """The steps of C (m x n) += A (m x k) B (k x n) on a pr x pc grid with block nb: per step an A panel
    (rows x w) is broadcast along a process row (pc ranks) and a B panel (w x cols) down a column (pr ranks), one
    after the other on the communication stream."""
    rows, cols = local_extent(m, nb, pr), local_extent(n, nb, pc)
    row_spans, col_spans = spans_nodes(pr, pc, net.gpus_per_node)
    steps = max(1, math.ceil(k / nb))
    last = k - (steps - 1) * nb

    def step(w):
        comm = (broadcast(rows * w * elem, pc, row_spans, variant, net)
                + broadcast(w * cols * elem, pr, col_spans, variant, net))
        return rows * cols * w / rate(rows, cols, w), comm

    (p_full, c_full), (p_last, c_last) = step(nb), step(last)
    return SummaSteps(steps, p_full, p_last, c_full, c_last)


def summa_memory(m, n, k, pr, pc, nb, elem):
    """Bytes on the busiest GPU: its parts of A, B, C and two panel slots (double buffering)."""
    rows, cols = local_extent(m, nb, pr), local_extent(n, nb, pc)
    panels = 2 * (rows * nb + nb * cols)
    return elem * (rows * local_extent(k, nb, pc) + local_extent(k, nb, pr) * cols + rows * cols + panels)


def apsp_memory(n, pr, pc, nb, elem):
    """Bytes on the busiest GPU: distances, successors (int32) and the argmax product's k buffer (int32)."""
    return local_extent(n, nb, pr) * local_extent(n, nb, pc) * (elem + 8)


def apsp_time(n, pr, pc, nb, sb, rate, net, strip_overhead, elem=4):
    """Blocked Floyd-Warshall with successors, rounds of kb = nb vertices, nothing overlapped. Returns
    (seconds, compute seconds). Per round: (a) the strip on one process column, kb / sb sub-blocks each a broadcast
    of the sb x sb snapshot and sb x kb sub-row down the column, a rows x sb x kb argmax product and the diagonal and
    relax work (strip_overhead); (b) the column panel with successors along the rows, the row panel down the columns;
    (c) the rows x kb x cols argmax update."""
    rows, cols = local_extent(n, nb, pr), local_extent(n, nb, pc)
    row_spans, col_spans = spans_nodes(pr, pc, net.gpus_per_node)

    def comm_time(nbytes, q, spans):
        return broadcast(nbytes, q, spans, "broadcast", net).time(net.nvlink_alpha, net.nvlink_beta)

    def round_time(kb):
        subs = math.ceil(kb / sb)
        strip_compute = subs * (rows * kb * sb / rate(rows, kb, sb) + strip_overhead)
        strip_comm = subs * comm_time((sb * sb + sb * kb) * elem, pr, col_spans)
        panels = comm_time(rows * kb * (elem + 4), pc, row_spans) + comm_time(kb * cols * elem, pr, col_spans)
        update = rows * cols * kb / rate(rows, cols, kb)
        return strip_compute + strip_comm + panels + update, strip_compute + update

    rounds = math.ceil(n / nb)
    full, last = round_time(nb), round_time(n - (rounds - 1) * nb)
    return tuple((rounds - 1) * f + l for f, l in zip(full, last))


# ---- records ---------------------------------------------------------------------------------------------------

def with_shape(r):
    """SUMMA records name n, and m and k where they differ; the model wants all three."""
    return {**r, "m": r.get("m", r["n"]), "k": r.get("k", r["n"])}


def usable(r, keys):
    """Runs of the library as built, under its own NCCL settings: records of an experimental build ("experiment")
    and NCCL_MAX_CTAS or NCCL_MAX_NCHANNELS experiments stay out."""
    return (all(k in r for k in keys) and r["type"] in ELEMENT_BYTES and r["seconds"] > 0
            and not any(k in r for k in ("experiment", "nccl_max_ctas", "nccl_max_channels")))


def load(paths, suite, keys, what, parser):
    """The usable records of `suite` in each file; a file without any is an error (a wrong file, most likely)."""
    out = []
    for path in paths:
        found = [r for r in campaigns.read(path) if r.get("suite") == suite and usable(r, keys)]
        if not found:
            parser.error(f"{path}: no usable {what} records (suite \"{suite}\" with {', '.join(keys)})")
        out += found
    return out


def load_curves(paths, radius, parser):
    """Bench records of ringmm's default call (backend cuda, kernel "ringmm"), one curve per (semiring, type,
    product)."""
    groups = {}
    for path in paths:
        found = [r for r in campaigns.read(path) if r.get("suite") == "bench" and r.get("backend") == "cuda"
                 and r.get("kernel") == "ringmm" and r.get("product") in ("gemm", "argmax")
                 and r.get("batch", 1) == 1 and r.get("updates_per_s", 0) > 0
                 and all(r.get(d, 0) > 0 for d in "mnk")]
        if not found:
            parser.error(f"{path}: no usable bench records (suite \"bench\", backend cuda, kernel ringmm, "
                         "product gemm or argmax)")
        for r in found:
            groups.setdefault((r["semiring"], r["type"], r["product"]), []).append(r)
    return {key: Curve(records, radius) for key, records in groups.items()}


def find_curve(curves, semiring, type_, product, plain_fallback=True):
    """The curve of a product, else its tropical twin's, else (with plain_fallback) the plain product's."""
    for s in (semiring, TWIN.get(semiring)):
        for p in dict.fromkeys((product, "gemm") if plain_fallback else (product,)):
            if (s, type_, p) in curves:
                return curves[(s, type_, p)]
    return None


def run_key(r):
    """Records comparable with one another: one file's part on one device, one product."""
    return (r["_campaign"], r["_file"], r.get("device"), r["semiring"], r.get("product", "gemm"), r["type"],
            r.get("resident", False))


def baseline_of(r, ones):
    """The 1x1 record of the same run as r, of the same n where there is one, else the nearest n; the fastest
    of several (other blocks, say), as the efficiency tables take it."""
    same = [o for o in ones if run_key(o) == run_key(r)]
    return min(same, key=lambda o: (abs(math.log(o["n"] / r["n"])), o["n"], -o["updates_per_s"])) if same else None


def rate_model(base, curves):
    """Local rates for the runs of a 1x1 record: its rate at its step's shape, the curve for other shapes."""
    anchor = (base["m"], base["n"], min(base["block"], base["k"]))
    curve = find_curve(curves, base["semiring"], base["type"], base.get("product", "gemm"))
    source = (f"the 1x1 record of {base['_file']} ({base.get('device', '?')}), n = {base['n']}, "
              f"{base['updates_per_s'] / 1e12:.2f}·10¹² upd/s")
    return RateModel(base["updates_per_s"], anchor, curve, source)


def best_baseline(ones, semiring, product="gemm", type_="f32", device=None):
    """For predictions: the 1x1 record of the semiring (or its twin) at the largest n with the highest rate,
    preferring the given device."""
    found = [o for o in ones if o["semiring"] in (semiring, TWIN.get(semiring)) and o.get("product", "gemm") == product
             and o["type"] == type_]
    found = [o for o in found if o.get("device") == device] or found
    return max(found, key=lambda o: (o["semiring"] == semiring, o["n"], o["updates_per_s"]), default=None)


def argmax_model(ones, curves, factor, device=None):
    """Rates of APSP's argmax products (min-plus f32): a 1x1 SUMMA argmax record if any; else the plain max-plus
    model scaled by the argmax/gemm ratio of the bench curves at the anchor, or by `factor` without argmax curves."""
    base = best_baseline(ones, "min-plus", "argmax", device=device)
    if base:
        return rate_model(base, curves)
    plain = best_baseline(ones, "min-plus", device=device)
    if plain is None:
        return None
    gemm = rate_model(plain, curves)
    arg_curve = find_curve(curves, "min-plus", "f32", "argmax", plain_fallback=False)
    measured = None
    if arg_curve and gemm.curve:
        a, g = arg_curve.log_rate(gemm.anchor), gemm.curve.log_rate(gemm.anchor)
        measured = None if a is None or g is None else 2.0 ** (a - g)
    used = measured or factor
    how = "argmax/gemm of the bench curves" if measured else "assumed argmax factor"
    return RateModel(gemm.rate * used, gemm.anchor, arg_curve or gemm.curve, f"{gemm.source} x {used:.2f} ({how})")


# ---- calibration -----------------------------------------------------------------------------------------------

@dataclass
class Case:
    """A measured multi-GPU SUMMA record with the parts of its predicted time that do not depend on the fit."""
    record: dict
    steps: SummaSteps
    t1: float       # the model's 1x1 time of the same product
    baseline: dict


def summa_case(r, base, curves, net):
    """A multi-GPU record as a Case, its local rates anchored on its baseline."""
    rate = rate_model(base, curves)
    elem = ELEMENT_BYTES[r["type"]]

    def on(pr, pc):
        return summa_steps(r["m"], r["n"], r["k"], pr, pc, r["block"], r["variant"], elem, rate, net)
    return Case(r, on(r["grid_rows"], r["grid_cols"]), on(1, 1).time(1.0, 1.0), base)  # one rank moves nothing


@dataclass
class Fit:
    """The link and overlap parameters used, and what least squares made of the records."""
    alpha: float
    beta: float
    eta: dict
    cases: int = 0
    rms: float = None
    identified: bool = False  # whether the records can see the link at all (else alpha, beta are the assumptions)
    exposed: float = 0.0      # the largest share of a record's time its transfers take at the assumed link
    lsq: tuple = None         # least squares' (alpha, beta), inside the region nearest the assumptions
    alpha_range: tuple = None
    beta_range: tuple = None


def choose_eta(sse, n, noise):
    """Per (alpha, beta), the index of eta: least squares where the records bound eta on both sides (95%, one
    degree of freedom); where they do not (transfers hide the products), the bounded value nearest 1, no
    interference, as the link keeps its assumption."""
    best = sse.min(axis=2, keepdims=True)
    ok = sse <= best + CHI2_1DOF_95 * np.maximum(best / max(1, n - 1), noise ** 2)
    bounded = ~ok[..., 0] & ~ok[..., -1]
    return np.where(bounded, sse.argmin(axis=2), np.where(ok, abs(ETA_GRID - 1), np.inf).argmin(axis=2))


def profiled_sse(cases, alphas, betas, noise):
    """Sum of squared log errors over (alpha, beta), with eta chosen per variant; returns the SSE array and, per
    variant, the eta array."""
    a, b, e = alphas[:, None, None], betas[None, :, None], ETA_GRID[None, None, :]
    total, etas = 0.0, {}
    for variant in sorted({c.record["variant"] for c in cases}):
        mine = [c for c in cases if c.record["variant"] == variant]
        sse = sum(np.log(c.steps.time(a, b, e) / c.record["seconds"]) ** 2 for c in mine)
        pick = choose_eta(sse, len(mine), noise)
        etas[variant] = ETA_GRID[pick]
        total = total + np.take_along_axis(sse, pick[..., None], axis=2)[..., 0]
    return total, etas


def confidence_limit(best, n, fitted, noise):
    """The largest SSE the records cannot reject at 95% against the best fit: a likelihood-ratio region for the two
    link parameters, with the residual scatter of the best fit as the noise, but never less than the timing noise."""
    return best + CHI2_2DOF_95 * max(best / max(1, n - fitted), noise ** 2)


def closest_acceptable(sse, alphas, betas, prior, limit, pull):
    """The chosen grid point: among those within the limit, the one nearest the assumed values (in decades) in the
    parameters the region leaves unbounded (pull = 1 for those), then the one of least SSE. A parameter the records
    bound is fitted by least squares; one they do not keeps its assumption instead of following their scatter."""
    dist = (pull[0] * np.log10(alphas / prior.nvlink_alpha)[:, None] ** 2
            + pull[1] * np.log10(betas / prior.nvlink_beta)[None, :] ** 2)
    dist = np.where(sse <= limit, np.round(dist, 6), np.inf)
    return np.unravel_index(np.where(dist == dist.min(), sse, np.inf).argmin(), dist.shape)


def zoom(grid, i):
    """A finer grid spanning one step of `grid` either side of its i-th value."""
    step = grid[1] / grid[0]
    return grid[i] * np.geomspace(1 / step, step, 21)


def span(grid, ok):
    """The range of values inside the region, widened by one grid step (its edge lies before the next value
    outside); None at an end the grid reaches (the records do not bound it there)."""
    values, step = grid[ok], grid[1] / grid[0]
    return (None if values[0] <= grid[0] else float(values[0] / step),
            None if values[-1] >= grid[-1] else float(values[-1] * step))


def least_squares(cases, prior, noise):
    """NVLink alpha and beta by least squares on a coarse grid over the plausible range, then two finer grids
    around the choice; returns them and their ranges (the coarse grid's values inside the 95% region)."""
    alphas, betas = ALPHA_GRID, BETA_GRID
    sse, etas = profiled_sse(cases, alphas, betas, noise)
    coarse, best, fitted = sse, sse.min(), 2 + len(etas)
    ok = coarse <= confidence_limit(best, len(cases), fitted, noise)
    ranges = span(ALPHA_GRID, ok.any(axis=1)), span(BETA_GRID, ok.any(axis=0))
    pull = [0.0 if lo is not None and hi is not None else 1.0 for lo, hi in ranges]
    for level in range(3):
        i, j = closest_acceptable(sse, alphas, betas, prior, confidence_limit(best, len(cases), fitted, noise), pull)
        if level == 2:
            break
        alphas, betas = zoom(alphas, i), zoom(betas, j)
        sse, _ = profiled_sse(cases, alphas, betas, noise)
        best = min(best, sse.min())
    return float(alphas[i]), float(betas[j]), *ranges


def exposed_share(cases, alpha, beta):
    """The largest share of a record's time that its transfers add at these link values."""
    return max(float(1 - c.steps.compute() / c.steps.time(alpha, beta)) for c in cases)


def calibrate(cases, prior, noise):
    """The link parameters and eta for the model. Least squares always runs, but its alpha and beta are used only
    where the records can see the link: if at the assumed values no record's transfers add more than the timing
    noise, the records cannot tell that link from a faster one, and what least squares prefers follows the
    scatter of the records rather than the link. eta is then fitted at the values used."""
    if not cases:
        return Fit(prior.nvlink_alpha, prior.nvlink_beta, {})
    alpha, beta, alpha_range, beta_range = least_squares(cases, prior, noise)
    exposed = exposed_share(cases, prior.nvlink_alpha, prior.nvlink_beta)
    identified = exposed >= noise
    used = (alpha, beta) if identified else (prior.nvlink_alpha, prior.nvlink_beta)
    sse, etas = profiled_sse(cases, np.array(used[:1]), np.array(used[1:]), noise)
    return Fit(*used, {v: float(e[0, 0]) for v, e in etas.items()}, len(cases), float(np.sqrt(sse[0, 0] / len(cases))),
               identified, exposed, (alpha, beta), alpha_range, beta_range)


def predict_case(case, fit):
    """Seconds the fitted model gives a multi-GPU case."""
    return float(case.steps.time(fit.alpha, fit.beta, fit.eta.get(case.record["variant"], 1.0)))


# ---- predictions -----------------------------------------------------------------------------------------------

@dataclass
class Settings:
    net: Network
    memory: float
    block: int
    apsp_block: int
    sub_block: int
    strip_overhead: float
    argmax_factor: float
    noise: float
    gpus: tuple
    sizes: tuple
    files: dict = field(default_factory=dict)


def summa_prediction(n, p, variant, rate, fit, s):
    """One prediction row of SUMMA n x n x n f32 on the near-square grid of p GPUs, or why it does not fit."""
    pr, pc = near_square_grid(p)
    need = summa_memory(n, n, n, pr, pc, s.block, 4)
    if need > s.memory:
        return {"grid": f"{pr}x{pc}", "fits": False, "memory_gb": need / 1e9}
    steps = summa_steps(n, n, n, pr, pc, s.block, variant, 4, rate, s.net)
    one = summa_steps(n, n, n, 1, 1, s.block, variant, 4, rate, s.net)
    eta = fit.eta.get(variant, 1.0) if p > 1 else 1.0
    t = float(steps.time(fit.alpha, fit.beta, eta))
    return {"grid": f"{pr}x{pc}", "fits": True, "memory_gb": need / 1e9, "seconds": t,
            "efficiency": float(one.time(fit.alpha, fit.beta)) / (p * t), "updates_per_s_per_gpu": n ** 3 / t / p,
            "comm_share": 1 - steps.compute(eta) / t, "local_rate": rate(local_extent(n, s.block, pr),
                                                                          local_extent(n, s.block, pc), s.block)}


def apsp_prediction(n, p, rate, net, s):
    """One prediction row of APSP on n vertices (f32) on the near-square grid of p GPUs, or why it does not fit."""
    pr, pc = near_square_grid(p)
    need = apsp_memory(n, pr, pc, s.apsp_block, 4)
    if need > s.memory:
        return {"grid": f"{pr}x{pc}", "fits": False, "memory_gb": need / 1e9}
    t, compute = apsp_time(n, pr, pc, s.apsp_block, s.sub_block, rate, net, s.strip_overhead)
    t1, _ = apsp_time(n, 1, 1, s.apsp_block, s.sub_block, rate, net, s.strip_overhead)
    rows, cols = local_extent(n, s.apsp_block, pr), local_extent(n, s.apsp_block, pc)
    return {"grid": f"{pr}x{pc}", "fits": True, "memory_gb": need / 1e9, "seconds": t, "efficiency": t1 / (p * t),
            "updates_per_s_per_gpu": n ** 3 / t / p, "comm_share": 1 - compute / t,
            "local_rate": rate(rows, cols, s.apsp_block)}


def predictions(ones, curves, fit, s):
    net = replace(s.net, nvlink_alpha=fit.alpha, nvlink_beta=fit.beta)
    rows, notes = [], []
    for semiring in ("max-plus", "plus-times"):
        base = best_baseline(ones, semiring)
        if base is None:
            notes.append(f"no 1x1 {semiring} f32 SUMMA record: no {semiring} prediction")
            continue
        rate = rate_model(base, curves)
        notes.append(f"SUMMA {semiring}: local rates from {rate.source}"
                     + (", shaped by the bench curve" if rate.curve else ", the same for every shape (no curve)"))
        for n in s.sizes:
            for p in s.gpus:
                for variant in ("broadcast", "ring"):
                    rows.append({"algorithm": f"SUMMA {semiring}", "variant": variant, "n": n, "gpus": p,
                                 **summa_prediction(n, p, variant, rate, fit, s)})
    rate = argmax_model(ones, curves, s.argmax_factor)
    if rate is None:
        notes.append("no 1x1 max-plus or min-plus f32 SUMMA record: no APSP prediction")
    else:
        notes.append(f"APSP min-plus: argmax rates from {rate.source}")
        for n in s.sizes:
            for p in s.gpus:
                rows.append({"algorithm": "APSP min-plus", "variant": "broadcast", "n": n, "gpus": p,
                             **apsp_prediction(n, p, rate, net, s)})
    return rows, notes


# ---- check -----------------------------------------------------------------------------------------------------

def summa_cases(records, curves, net):
    """The 1x1 records, and a Case for every multi-GPU record with a baseline of its run."""
    ones = [r for r in records if r["ranks"] == 1]
    cases = []
    for r in records:
        base = baseline_of(r, ones) if r["ranks"] > 1 else None
        if base:
            cases.append(summa_case(r, base, curves, net))
    return ones, cases


def check_row(case, fit, held_out=False):
    r = case.record
    t = predict_case(case, fit)
    same_n = case.baseline["n"] == r["n"] and case.baseline["m"] == r["m"] and case.baseline["k"] == r["k"]
    return {"run": r["_file"], "device": r.get("device", "?"), "semiring": r["semiring"] +
            (" argmax" if r.get("product") == "argmax" else ""), "type": r["type"], "n": r["n"],
            "grid": f"{r['grid_rows']}x{r['grid_cols']}", "variant": r["variant"], "measured_s": r["seconds"],
            "predicted_s": t, "error": t / r["seconds"] - 1, "held_out": held_out,
            "measured_efficiency": case.baseline["seconds"] / (r["ranks"] * r["seconds"]) if same_n else None,
            "predicted_efficiency": case.t1 / (r["ranks"] * t)}


def apsp_row(r, rate, net, s, measured_one):
    """One APSP record against the model; measured_one: the 1-GPU time of the same run and n, if recorded."""
    def model_time(pr, pc):
        return apsp_time(r["n"], pr, pc, r["block"], s.sub_block, rate, net, s.strip_overhead,
                         ELEMENT_BYTES[r["type"]])[0]
    t = model_time(r["grid_rows"], r["grid_cols"])
    return {"run": r["_file"], "device": r.get("device", "?"), "n": r["n"],
            "grid": f"{r['grid_rows']}x{r['grid_cols']}", "measured_s": r["seconds"], "predicted_s": t,
            "error": t / r["seconds"] - 1,
            "measured_efficiency": measured_one / (r["ranks"] * r["seconds"]) if measured_one else None,
            "predicted_efficiency": model_time(1, 1) / (r["ranks"] * t)}


def apsp_rows(records, ones, curves, fit, s):
    """Measured APSP records against the model, the argmax rate taken from the same device where possible."""
    net = replace(s.net, nvlink_alpha=fit.alpha, nvlink_beta=fit.beta)
    single = {(r["_campaign"], r["_file"], r["n"]): r["seconds"] for r in records if r["ranks"] == 1}
    out = []
    for r in sorted(records, key=lambda r: (r["_file"], r["n"], r["ranks"], r["grid_rows"])):
        rate = argmax_model(ones, curves, s.argmax_factor, r.get("device"))
        if rate:
            out.append(apsp_row(r, rate, net, s, single.get((r["_campaign"], r["_file"], r["n"]))))
    return out


def model(summa, apsp, curves, s):
    """Everything the fragment shows, as plain data (also what --json writes)."""
    ones, cases = summa_cases(summa, curves, s.net)
    cases.sort(key=lambda c: (c.record["_file"], c.record["semiring"], c.record["n"], c.record["ranks"],
                              c.record["grid_rows"], c.record["variant"]))
    fit = calibrate(cases, s.net, s.noise)
    small, larger = [c for c in cases if c.record["ranks"] <= 2], [c for c in cases if c.record["ranks"] > 2]
    fit_small = calibrate(small, s.net, s.noise) if small and larger else None
    held = [check_row(c, fit_small, True) for c in larger] if fit_small else []
    rows, notes = predictions(ones, curves, fit, s)
    return {"files": s.files, "fit": vars(fit), "fit_small": vars(fit_small) if fit_small else None,
            "settings": settings_dict(s), "check": [check_row(c, fit) for c in cases],
            "held_out": held, "apsp_check": apsp_rows(apsp, ones, curves, fit, s),
            "predictions": rows, "notes": notes, "reference": REFERENCE}


def settings_dict(s):
    return {**{k: v for k, v in vars(s).items() if k not in ("net", "files")}, **vars(s.net)}


# ---- output ----------------------------------------------------------------------------------------------------

def table(head, rows):
    return "\n".join(["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
                     + ["| " + " | ".join(row) + " |" for row in rows])


def pct(x):
    return "" if x is None else f"{100 * x:+.1f}%"


def eff(x):
    return "" if x is None else f"{x:.3f}"


def interval(lo, hi, scale, unit):
    """How far the records constrain a parameter."""
    if lo is None and hi is None:
        return "not constrained by these records"
    if hi is None:
        return f"records say > {lo * scale:.3g} {unit}"
    if lo is None:
        return f"records say < {hi * scale:.3g} {unit}"
    return f"records say {lo * scale:.3g} to {hi * scale:.3g} {unit}"


def link_rows(f, s):
    """The NVLink rows: fitted, or assumed with what least squares would have said and why it was not used."""
    a_range, b_range = interval(*f["alpha_range"], 1e6, "us"), interval(*f["beta_range"], 1e-9, "GB/s")
    if not f["cases"]:
        why = ["assumed: no multi-GPU record with a 1x1 baseline"] * 2
    elif f["identified"]:
        why = [f"fitted on {f['cases']} multi-GPU records ({r})" for r in (a_range, b_range)]
    else:
        why = [f"assumed: the records cannot see the link (at the assumed values its transfers add at most "
               f"{100 * f['exposed']:.2g}% to a record's time, under the {100 * s['noise']:.2g}% timing noise); "
               f"the fit alone: {value} ({r})" for value, r in ((f"{f['lsq'][0] * 1e6:.3g} us", a_range),
                                                                (f"{f['lsq'][1] / 1e9:.3g} GB/s", b_range))]
    return [["NVLink alpha", f"{f['alpha'] * 1e6:.3g} us", why[0]],
            ["NVLink beta", f"{f['beta'] / 1e9:.3g} GB/s", why[1]]]


def parameter_rows(m):
    f, s = m["fit"], m["settings"]
    rows = link_rows(f, s)
    rows += [[f"overlap eta ({v})", f"{e:.3f}", "fitted: the local rate while panels move, over the 1x1 rate"]
             for v, e in sorted(f["eta"].items())]
    if f["cases"]:
        rows.append(["model against the records", f"{100 * f['rms']:.1f}% RMS", f"{f['cases']} multi-GPU records"])
    rows += [["InfiniBand alpha", f"{s['ib_alpha'] * 1e6:.3g} us", "assumed (per hop)"],
             ["InfiniBand beta", f"{s['ib_beta'] / 1e9:.3g} GB/s", "assumed: 400 Gb/s per GPU times the efficiency"],
             ["GPUs per node", str(s["gpus_per_node"]), "assumed"],
             ["memory per GPU", f"{s['memory'] / 1e9:.0f} GB", "assumed"],
             ["timing noise", f"{100 * s['noise']:.2g}%", "assumed"],
             ["SUMMA block; APSP block, sub-block", f"{s['block']}; {s['apsp_block']}, {s['sub_block']}", "setting"],
             ["strip diagonal/relax work", f"{s['strip_overhead'] * 1e6:.3g} us per sub-block", "assumed"],
             ["argmax factor", f"{s['argmax_factor']:.2f}", "assumed; used only without argmax records"]]
    return rows


def check_table(rows, which):
    head = ["run", "device", "semiring", "type", "n", "grid", "variant", "measured ms", f"predicted ms ({which})",
            "error", "measured E", "predicted E"]
    return table(head, [[r["run"], r["device"], r["semiring"], r["type"], str(r["n"]), r["grid"], r["variant"],
                         f"{r['measured_s'] * 1e3:.1f}", f"{r['predicted_s'] * 1e3:.1f}", pct(r["error"]),
                         eff(r["measured_efficiency"]), eff(r["predicted_efficiency"])] for r in rows])


def prediction_table(rows):
    head = ["algorithm", "variant", "n", "GPUs", "grid", "GB per GPU", "seconds", "E", "10¹² upd/s per GPU",
            "local 10¹² upd/s", "comm share"]
    out = []
    for r in rows:
        cells = [r["algorithm"], r["variant"], str(r["n"]), str(r["gpus"]), r["grid"], f"{r['memory_gb']:.1f}"]
        if r["fits"]:
            cells += [f"{r['seconds']:.3g}", eff(r["efficiency"]), f"{r['updates_per_s_per_gpu'] / 1e12:.2f}",
                      f"{r['local_rate'] / 1e12:.2f}", f"{100 * r['comm_share']:.0f}%"]
        else:
            cells += ["does not fit", "", "", "", ""]
        out.append(cells)
    return table(head, out)


def markdown(m):
    f = m["files"]
    sources = "; ".join(f"{kind}: " + ", ".join(f"`{p}`" for p in paths) for kind, paths in f.items() if paths)
    parts = [f"Generated by `lab/reports/scaling_model.py` from {sources}; do not edit by hand.",
             "**Parameters.** Values marked assumed are not measured; the fit keeps an assumption wherever the "
             "records cannot tell it apart from other values.", table(["parameter", "value", "source"],
                                                                        parameter_rows(m))]
    parts += ["\n".join(f"* {note}" for note in m["notes"])]
    parts += ["**Check: every multi-GPU SUMMA record against the model fitted on all of them.**",
              check_table(m["check"], "fit on all")]
    if m["held_out"]:
        parts += [f"**Held-out check: records on more than 2 GPUs predicted by the fit on the "
                  f"{m['fit_small']['cases']} records of 2 GPUs.**", check_table(m["held_out"], "fit on 2 GPUs")]
    else:
        parts += ["Held-out check: no records on more than 2 GPUs (or none on 2) in these files, nothing to predict."]
    if m["apsp_check"]:
        parts += ["**APSP records against the model.**", table(
            ["run", "device", "n", "grid", "measured s", "predicted s", "error", "measured E", "predicted E"],
            [[r["run"], r["device"], str(r["n"]), r["grid"], f"{r['measured_s']:.3g}", f"{r['predicted_s']:.3g}",
              pct(r["error"]), eff(r["measured_efficiency"]), eff(r["predicted_efficiency"])]
             for r in m["apsp_check"]])]
    parts += ["**Predictions** (f32, near-square grids, E against one GPU of unbounded memory at the 1x1 rate).",
              prediction_table(m["predictions"]), REFERENCE]
    return "\n\n".join(parts) + "\n"


# ---- command line ----------------------------------------------------------------------------------------------

def existing(path):
    p = pathlib.Path(path)
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {path}")
    return p


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summa", nargs="+", type=existing, required=True, help="SUMMA records (suite summa)")
    parser.add_argument("--apsp", nargs="+", type=existing, default=[], help="APSP records (suite apsp)")
    parser.add_argument("--curve", nargs="+", type=existing, default=[], help="bench records: local rate curves")
    parser.add_argument("--markdown", type=pathlib.Path, help="write the fragment here too")
    parser.add_argument("--json", type=pathlib.Path, help="write the model's data here")
    add = parser.add_argument
    add("--nvlink-alpha-us", type=float, default=10.0, help="assumed NVLink latency per hop (fit's prior)")
    add("--nvlink-beta-gbs", type=float, default=300.0, help="assumed NVLink GB/s per GPU (fit's prior)")
    add("--ib-alpha-us", type=float, default=5.0, help="assumed InfiniBand latency per hop")
    add("--ib-beta-gbs", type=float, default=50.0, help="nominal InfiniBand GB/s per GPU (400 Gb/s)")
    add("--ib-efficiency", type=float, default=0.8, help="fraction of the nominal InfiniBand rate reached")
    add("--gpus-per-node", type=int, default=8, help="GPUs per node (8, or 4)")
    add("--memory-gb", type=float, default=80.0, help="memory per GPU")
    add("--block", type=int, default=1024, help="SUMMA block for the predictions")
    add("--apsp-block", type=int, default=1024)
    add("--sub-block", type=int, default=128, help="APSP strip sub-block on GPUs")
    add("--strip-overhead-us", type=float, default=50.0, help="diagonal and relax work per strip sub-block")
    add("--argmax-factor", type=float, default=0.55, help="argmax rate over the plain max-plus rate, without records")
    add("--noise", type=float, default=2.0, help="timing noise in percent: smaller differences are not evidence")
    add("--curve-radius", type=float, default=4.0, help="octaves within which a bench record counts as near")
    add("--gpus", type=int, nargs="+", default=[64, 256, 1024])
    add("--sizes", type=int, nargs="+", default=[65536, 131072, 262144, 524288, 1048576])
    return parser, parser.parse_args(argv)


def main(argv=None):
    parser, a = parse(argv)
    net = Network(a.nvlink_alpha_us * 1e-6, a.nvlink_beta_gbs * 1e9, a.ib_alpha_us * 1e-6,
                  a.ib_beta_gbs * 1e9 * a.ib_efficiency, a.gpus_per_node)
    files = {kind: [campaigns.label(p) for p in paths] for kind, paths in
             (("SUMMA", a.summa), ("APSP", a.apsp), ("curves", a.curve))}
    s = Settings(net, a.memory_gb * 1e9, a.block, a.apsp_block, a.sub_block, a.strip_overhead_us * 1e-6,
                 a.argmax_factor, a.noise / 100, tuple(a.gpus), tuple(a.sizes), files)
    summa = [with_shape(r) for r in load(a.summa, "summa", SUMMA_KEYS, "SUMMA", parser)]
    if not any(r["ranks"] == 1 for r in summa):
        parser.error("no 1x1 SUMMA record in the --summa files: the model has no local rate")
    apsp = load(a.apsp, "apsp", APSP_KEYS, "APSP", parser)
    m = model(summa, apsp, load_curves(a.curve, a.curve_radius, parser), s)
    text = markdown(m)
    if a.markdown:
        a.markdown.write_text(text)
    if a.json:
        a.json.write_text(json.dumps(m, indent=1, sort_keys=True) + "\n")
    print(text, end="")


if __name__ == "__main__":
    main()
