"""Scaling in the number of kernels: mirror descent (one group) vs SPG-GMKL vs PGD, l1-MKL.

After Figure 2 of Nath et al., "On the Algorithmics and Applications of a Mixed-norm based
Kernel Learning Formulation", NIPS 2009: training time against the number of kernels on two
binary tasks, mirror descent with one group (ordinary l1-MKL) against a gradient-descent MKL
solver (the paper's was SimpleMKL; here SPG-GMKL and its PGD baseline, ALGORITHMS.md sections 1
and 4). The paper's claim: mirror descent needs ``O(log m)`` iterations (its Result 1), so its
number of SVM solves is nearly flat in m; it reports speed-ups of up to 12x over SimpleMKL.

Protocol:

- Tasks: two binary problems from the UCI Multiple Features digits (``--tasks``, default
  "3v5" and "1v7"), ``--n-train`` training digits balanced over the two classes (seeded).
- Kernels: a fixed, seeded list of ``max(--sizes)`` RBF kernels, each on a random view
  (fou, fac, kar, pix, zer, mor), a random half of its standardised features and a width
  ``f * median distance`` with ``f`` log-uniform in [0.25, 4]; unit trace; float32 stack. The
  problem with m kernels uses the first m, so the sizes are nested.
- Solvers on the same ``SumOfKernels``, same C (``--C``) and relative duality gap (``--tol``):
  ``mirror_descent`` (regularizer l1, i.e. one group), ``spg_gmkl`` (SPG-GMKL) and
  ``spg_gmkl`` with ``SOLVERS["pgd"].defaults`` (PGD). A JIT warm-up runs first.
- Reported: fit seconds, SVM solves, outer iterations, final objective and relative gap, and
  whether the solver reached ``--tol``.

Timings are wall-clock on a shared 2-core machine (other jobs running): read ratios, not
absolute times.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_small_sets import _write_json, machine_info  # noqa: E402

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "mirror_scaling.json"
DEFAULT_SIZES = [10, 30, 100, 300, 1000, 3000, 10000]
TASKS = {"3v5": (3, 5), "1v7": (1, 7), "6v9": (6, 9), "2v8": (2, 8)}
# Nath et al. 2009, section 4 and Figure 2: mirror descent up to 12 times faster than SimpleMKL
PAPER_MAX_SPEEDUP = 12.0


def kernel_specs(views, n_kernels, seed, RBF):
    """Seeded random RBF kernels on half of one view's features each (global column indices)."""
    rng = np.random.default_rng(seed)
    names = list(views)
    offsets = np.cumsum([0] + [views[k].shape[1] for k in names])
    specs = []
    for _ in range(n_kernels):
        v = int(rng.integers(len(names)))
        width = views[names[v]].shape[1]
        cols = np.sort(rng.choice(width, size=max(1, width // 2), replace=False)) + offsets[v]
        factor = float(np.exp(rng.uniform(np.log(0.25), np.log(4.0))))
        specs.append((tuple(int(c) for c in cols), factor))
    return specs


def build_stack(X, specs, RBF, KernelBank):
    """Standardise X, scale each width by the median distance on its columns, build the stack."""
    Z = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    medians = {}
    kernels = []
    for cols, factor in specs:
        if cols not in medians:
            B = Z[:, cols]
            sq = np.sum(B**2, axis=1)
            d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * B @ B.T, 0.0)
            medians[cols] = float(np.sqrt(np.median(d2[np.triu_indices(len(B), 1)])))
        kernels.append(RBF(sigma=factor * max(medians[cols], 1e-12), features=cols))
    return KernelBank(kernels, standardize=True, dtype=np.float32).fit_transform(X)


def solve(name, combination, y, args, modules):
    from mklearn.formulation.regularizers import L1Simplex

    mirror_descent, spg_gmkl, SOLVERS = modules
    if name == "mirror":
        function, options = mirror_descent, {}
    elif name == "spg":
        function, options = spg_gmkl, {}
    else:
        function, options = spg_gmkl, dict(SOLVERS["pgd"].defaults)
    start = time.perf_counter()
    result = function(
        combination, y, args.C, L1Simplex(), tol=args.tol, max_iter=args.max_iter, **options
    )
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "n_svm_solves": int(result.n_svm_solves),
        "n_iter": int(result.n_iter),
        "objective": float(result.objective),
        "relative_gap": float(result.duality_gap / abs(result.objective)),
        "converged": bool(result.converged),
        "stop_reason": result.stop_reason,
        "n_selected": int(np.sum(result.kernel_weights > 1e-6)),
    }


def warm_up(modules, SumOfKernels):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(20, 3))
    stack = np.stack([A @ A.T, np.exp(-np.sum((A[:, None] - A[None]) ** 2, axis=2))], axis=2)
    y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
    args = argparse.Namespace(C=1.0, tol=1e-2, max_iter=20)
    for name in ("mirror", "spg", "pgd"):
        solve(name, SumOfKernels(stack.astype(np.float32)), y, args, modules)


def run(args):
    from mklearn.datasets import load_mfeat
    from mklearn.formulation.combinations import SumOfKernels
    from mklearn.kernels import RBF, KernelBank
    from mklearn.solvers import SOLVERS, mirror_descent, spg_gmkl

    modules = (mirror_descent, spg_gmkl, SOLVERS)
    warm_up(modules, SumOfKernels)
    views, labels = load_mfeat()
    X_all = np.hstack(list(views.values()))
    specs = kernel_specs(views, max(args.sizes), args.seed, RBF)
    rng = np.random.default_rng(args.seed)
    rows_out = []
    for task in args.tasks:
        a, b = TASKS[task]
        rows = np.concatenate(
            [
                rng.choice(np.flatnonzero(labels == c), args.n_train // 2, replace=False)
                for c in (a, b)
            ]
        )
        y = np.where(labels[rows] == a, 1.0, -1.0)
        start = time.perf_counter()
        full = build_stack(X_all[rows], specs, RBF, KernelBank)
        print(
            f"task {task}: {full.shape[2]} kernels on {len(rows)} digits in "
            f"{time.perf_counter() - start:.1f} s",
            flush=True,
        )
        for m in args.sizes:
            combination = SumOfKernels(
                np.ascontiguousarray(full[:, :, :m].transpose(2, 0, 1)).transpose(1, 2, 0)
            )
            row = {"task": task, "n_kernels": m}
            for name in args.solvers:
                if name == "pgd" and m > args.pgd_max_kernels:
                    continue
                row[name] = solve(name, combination, y, args, modules)
            rows_out.append(row)
            print("  " + _row_text(row, args.solvers), flush=True)
            del combination
        del full
    return rows_out


def _row_text(row, solvers):
    cells = [f"m={row['n_kernels']:>5}"]
    for name in solvers:
        r = row.get(name)
        if r is None:
            cells.append(f"{name}: skipped")
            continue
        flag = "" if r["converged"] else f" ({r['stop_reason']})"
        cells.append(
            f"{name}: {r['seconds']:7.2f} s {r['n_svm_solves']:4d} SVMs "
            f"{r['n_iter']:4d} it gap {r['relative_gap']:.1e}{flag}"
        )
    return " | ".join(cells)


def report(rows, args):
    print(
        "\nTime (s) and SVM solves against the number of kernels; l1-MKL, "
        f"C={args.C}, tol={args.tol}, n={args.n_train}"
    )
    for task in args.tasks:
        print(f"\ntask {task}")
        header = ["m"] + [f"{s} s" for s in args.solvers] + [f"{s} SVMs" for s in args.solvers]
        print(" | ".join(f"{h:>10}" for h in header))
        for row in (r for r in rows if r["task"] == task):
            cells = [str(row["n_kernels"])]
            for key in ("seconds", "n_svm_solves"):
                for s in args.solvers:
                    r = row.get(s)
                    if r is None:
                        cells.append("-")
                    else:
                        mark = "" if r["converged"] else "*"
                        cells.append(
                            f"{r[key]:.2f}{mark}" if key == "seconds" else f"{r[key]}{mark}"
                        )
            print(" | ".join(f"{c:>10}" for c in cells))
    print(
        "\n* did not reach tol (max_iter or stalled). "
        f"Paper (Figure 2): mirror descent up to {PAPER_MAX_SPEEDUP:g}x faster than SimpleMKL."
    )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES)
    parser.add_argument("--tasks", nargs="+", choices=sorted(TASKS), default=["3v5", "1v7"])
    parser.add_argument(
        "--solvers", nargs="+", choices=["mirror", "spg", "pgd"], default=["mirror", "spg", "pgd"]
    )
    parser.add_argument("--n-train", type=int, default=150)
    parser.add_argument("--C", type=float, default=100.0)
    parser.add_argument(
        "--tol",
        type=float,
        default=1e-4,
        help="relative duality gap (1e-3 is reached in a handful of steps here)",
    )
    parser.add_argument("--max-iter", type=int, default=2000)
    parser.add_argument(
        "--pgd-max-kernels", type=int, default=10**9, help="skip PGD above this many kernels"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--quick", action="store_true", help="sizes 10..300, one task")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.tasks = [10, 30, 100, 300], args.tasks[:1]
    return args


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    info = machine_info()
    rows = run(args)
    report(rows, args)
    _write_json(
        {
            "benchmark": "mirror descent scaling in the number of kernels (l1-MKL)",
            "arguments": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "machine": info,
            "paper_max_speedup_over_simplemkl": PAPER_MAX_SPEEDUP,
            "rows": rows,
            "total_seconds": time.perf_counter() - start,
        },
        args.output,
    )
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
