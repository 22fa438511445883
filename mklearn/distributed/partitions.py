"""Prediction on a Dask collection, partition by partition, and the bytes of a collection
that a fit gathers (:func:`mklearn.memory.gathered`).

A fitted model's prediction of one test point needs only that point and the model (the
support vectors or the feature map and weights): rows are independent. So on a
``dask.array.Array`` partitioned by rows, :func:`on_partitions` maps the estimator's own
method over the row blocks (``dask.array.map_blocks``) and returns a Dask array with the
same row chunks, computed where the blocks live when a ``distributed.Client`` runs them;
X is never gathered. The other axes (features, or training points and kernels of a
precomputed stack) are made one chunk each first, as a block must hold whole rows. On a
``dask.dataframe.DataFrame`` the method runs on each partition, a pandas DataFrame with
the column names (so a model fitted on named columns checks and orders them as on any
DataFrame), and the partitions' outputs are joined into a Dask array whose row chunks
have unknown sizes (the partitions' lengths are not known before they are computed).

Nothing here imports Dask: an object can be a Dask collection only once Dask is imported.
"""

from __future__ import annotations

import functools
import sys
import warnings

import numpy as np

from mklearn.kernels.checks import is_dask_collection

__all__ = ["collection_bytes", "on_partitions"]


def _is_dask_dataframe(X) -> bool:
    if "dask.dataframe" not in sys.modules:
        return False
    import dask.dataframe as dd

    return isinstance(X, dd.DataFrame)


def collection_bytes(X) -> float:
    """Bytes of a Dask array (NaN when its chunks have unknown sizes) or dataframe or series
    (its partitions' ``memory_usage``, computed where they live)."""
    import dask.array as da

    if isinstance(X, da.Array):
        return float(X.nbytes)
    return float(np.sum(X.memory_usage(deep=True).compute()))


def _check_dask_array(X, name):
    import dask.array as da

    if not isinstance(X, da.Array):
        raise TypeError(
            f"{name} takes a dask.array.Array or a dask.dataframe.DataFrame partitioned by "
            f"rows; got {type(X).__name__}. Convert it first (e.g. bag.to_dataframe(), or "
            "dask.array.from_delayed)")
    if X.ndim not in (2, 3):
        raise ValueError(f"{name} expects a 2-D dask array of test points (or a 3-D test "
                         f"kernel stack); got {X.ndim} dimension(s)")


def _apply(block, estimator=None, method=None):
    return method(estimator, block)


def _output_of_one_row(method, estimator, row):
    """The method's output on ``row`` (one row of zeros): its shape beyond the rows and its
    dtype (no warning: a zero point may sit outside the training range)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(method(estimator, row))


def on_partitions(method):
    """Decorate a prediction method ``method(self, X)`` so that a Dask array or dataframe
    ``X`` gives a Dask array, computed block by block of rows with ``method`` itself.

    Other inputs go to ``method`` unchanged. The output's shape beyond the rows and its
    dtype are read from the method's output on one row of zeros.

    Raises
    ------
    TypeError
        If ``X`` is another Dask collection than an array or a dataframe.
    ValueError
        If the array has other than 2 or 3 dimensions.
    """

    @functools.wraps(method)
    def on_blocks(self, X, *args, **kwargs):
        if args or kwargs or not is_dask_collection(X):
            return method(self, X, *args, **kwargs)
        if _is_dask_dataframe(X):
            return _on_dataframe(method, self, X)
        _check_dask_array(X, f"{type(self).__name__}.{method.__name__}")
        X = X.rechunk({axis: -1 for axis in range(1, X.ndim)})
        probe = _output_of_one_row(method, self,
                                   np.zeros((1,) + tuple(X.shape[1:]), dtype=X.dtype))
        columns = tuple(probe.shape[1:])
        dropped = list(range(1 + len(columns), X.ndim))
        return X.map_blocks(_apply, estimator=self, method=method, dtype=probe.dtype,
                            chunks=(X.chunks[0],) + tuple((c,) for c in columns),
                            drop_axis=dropped or None,
                            meta=np.empty((0,) * probe.ndim, dtype=probe.dtype))

    return on_blocks


def _on_dataframe(method, estimator, X):
    """The method on each partition of a Dask DataFrame, the outputs joined into a Dask array
    (row chunks of unknown size); the estimator is one task of the graph."""
    import dask
    import dask.array as da
    import pandas as pd

    row = pd.DataFrame(np.zeros((1, len(X.columns))), columns=X.columns).astype(X.dtypes)
    probe = _output_of_one_row(method, estimator, row)
    fitted = dask.delayed(estimator, pure=True)
    parts = [da.from_delayed(dask.delayed(method)(fitted, part),
                             shape=(np.nan,) + probe.shape[1:], dtype=probe.dtype,
                             meta=np.empty((0,) * probe.ndim, dtype=probe.dtype))
             for part in X.to_delayed()]
    return da.concatenate(parts, axis=0)
