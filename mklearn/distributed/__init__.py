"""Per-kernel work on a Dask cluster (optional extra ``mklearn[dask]``).

Inside ``joblib.parallel_config(backend="dask")`` with a live ``distributed.Client``, an
estimator with ``n_jobs`` other than 1 wraps its row-backed kernel operator in
:class:`DaskKernels`: the points go to every worker once, and each outer iteration's quadratic
terms ``v' K_k v`` and products ``K_k v`` run on the workers in blocks of kernels. MWUMKL,
whose per-kernel state changes at every iteration, keeps its blocks in Dask actors
(:class:`DaskColumns`). See ``docs/distributed.md``.
"""

from mklearn.distributed.backend import active_client, check_workers, in_dask_worker, local_jobs
from mklearn.distributed.mwu import DaskColumns, DaskMWUBlocks
from mklearn.distributed.operator import DaskKernels
from mklearn.distributed.placement import DASK, DaskPlacement

__all__ = ["DASK", "DaskColumns", "DaskKernels", "DaskMWUBlocks", "DaskPlacement",
           "active_client", "check_workers", "in_dask_worker", "local_jobs"]
