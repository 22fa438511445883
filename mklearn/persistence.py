"""Saving and loading fitted models without pickle.

A model file is an ``.npz`` archive (``allow_pickle=False`` on load) with a JSON header in the
array ``header`` (format name and version, estimator parameters, kernel specs, classes) and
plain numeric arrays: kernel weights, dual coefficients, intercepts, the support vectors'
(standardised) rows, standardisation and trace scales. Only what prediction needs is kept.
Format version 1 holds sums of kernels; version 2 adds product-kernel models
(``combination="product"`` on X: block layout, base width and standardisation instead of
kernel specs). Sum models are still written as version 1, so older readers keep reading them.
Files are written to a temporary file in the target directory and renamed, so an interrupted
save never leaves a partial model.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager

import numpy as np

from mklearn.kernels import KernelBank, kernel_from_dict

FORMAT = "mklearn-model"
VERSION = 2  # the newest format this module reads and writes
_SUM_VERSION = 1
_PARAMS = ("kernels", "solver", "regularizer", "p", "lam", "C", "tol", "max_iter", "kernel_dtype")


def save_model(estimator, path) -> None:
    """Write a fitted :class:`~mklearn.MKLClassifier` to ``path`` (an ``.npz`` file).

    Raises
    ------
    ValueError
        If the estimator is not fitted, or was fitted on precomputed kernels or distances
        (the file could not rebuild test kernels from raw data).
    OSError
        If the directory is not writable; no partial file is left behind.
    """
    if not hasattr(estimator, "kernel_weights_"):
        raise ValueError("the model is not fitted; call fit before saving it")
    product = getattr(estimator, "product_", None)
    if isinstance(product, str):  # fitted on a stack of distances
        raise ValueError(
            "a model fitted on precomputed distances cannot be saved: the file must rebuild "
            "test kernels from data; fit with kernels='features' instead"
        )
    if product is not None:
        _save_product(estimator, path)
        return
    if estimator.bank_ is None:
        raise ValueError(
            "a model fitted on precomputed kernels cannot be saved: the file must "
            "rebuild test kernels from data; fit with a kernel family instead"
        )
    bank = estimator.bank_
    state = bank.fitted_state()
    params = {k: _plain(getattr(estimator, k)) for k in _PARAMS}
    params["kernels"] = "listed"
    header = _common_header(estimator, _SUM_VERSION, params)
    header.update(
        {
            "kernels": [spec.to_dict() for spec in bank.specs],
            "standardize": bool(bank.standardize),
            "normalize": bank.normalize,
            "dtype": np.dtype(bank.dtype).name,
        }
    )
    arrays = _common_arrays(estimator, header)
    arrays.update(
        {
            "support_vectors": state["X_fit"][estimator.support_],
            "mean": state["mean"],
            "scale": state["scale"],
            "trace_scales": state["trace_scales"],
        }
    )
    with atomic_write(path, "wb") as handle:
        np.savez(handle, **arrays)


def _save_product(estimator, path):
    fitted = estimator.product_
    params = {k: _plain(getattr(estimator, k)) for k in _PARAMS if k != "kernels"}
    params["combination"] = "product"
    header = _common_header(estimator, VERSION, params)
    header.update({"combination": "product", "gamma": float(fitted.gamma),
                   "block_names": list(fitted.names)})
    arrays = _common_arrays(estimator, header)
    arrays.update(
        {
            "support_vectors": estimator.support_vectors_,
            "mean": fitted.mean,
            "scale": fitted.scale,
            "block_features": fitted.features,
            "block_codes": fitted.codes,
        }
    )
    with atomic_write(path, "wb") as handle:
        np.savez(handle, **arrays)


def _common_header(estimator, version, params):
    classes = estimator.classes_
    return {
        "format": FORMAT,
        "version": version,
        "estimator": type(estimator).__name__,
        "params": params,
        "classes": classes.tolist(),
        "classes_dtype": classes.dtype.kind,
        "n_features_in": int(estimator.n_features_in_),
        "kernel_names": list(estimator.kernel_names_),
        "fit": {
            "objective": np.atleast_1d(estimator.objective_).tolist(),
            "duality_gap": np.atleast_1d(estimator.duality_gap_).tolist(),
            "n_iter": np.atleast_1d(estimator.n_iter_).tolist(),
        },
    }


def _common_arrays(estimator, header):
    return {
        "header": np.array(json.dumps(header)),
        "kernel_weights": np.atleast_2d(estimator.kernel_weights_),
        "dual_coef": estimator.dual_coef_,
        "intercept": estimator.intercept_,
    }


@contextmanager
def atomic_write(path, mode="w"):
    """Open a temporary file beside ``path``; rename it onto ``path`` only on success.

    An interrupted or failing write leaves ``path`` as it was and no temporary file behind.
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=".mklearn-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _plain(value):
    """numpy scalars as Python numbers, so that the header is plain JSON."""
    return value.item() if isinstance(value, np.generic) else value


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def load_model(path):
    """Read a model written by :func:`save_model`; returns a fitted ``MKLClassifier``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not an mklearn model, or its format version is newer than this library.
    """
    try:
        with np.load(os.fspath(path), allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
        header = json.loads(str(arrays["header"]))
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise ValueError(
            f"{path} is not an mklearn model file (it does not read as an .npz "
            "archive with a JSON header); write one with `mklearn fit --save "
            "MODEL`"
        ) from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path} is not an mklearn model file (no '{FORMAT}' header)")
    version = header.get("version")
    if not isinstance(version, int):
        raise ValueError(f"{path} has no valid model format version; the file is damaged")
    if version > VERSION:
        raise ValueError(
            f"{path} has model format version {version}; this mklearn "
            f"reads up to version {VERSION}: upgrade mklearn"
        )
    try:
        return _rebuild(header, arrays)
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        raise ValueError(
            f"{path} is a damaged mklearn model file ({exc!r}); save the model again"
        ) from exc


def _rebuild(header, arrays):
    from mklearn.estimators import MKLClassifier

    if header.get("combination") == "product":
        return _rebuild_product(header, arrays)
    specs = [kernel_from_dict(d) for d in header["kernels"]]
    params = dict(header["params"])
    params["kernels"] = specs
    model = MKLClassifier(**params)
    model.bank_ = KernelBank.from_fitted(
        specs,
        standardize=header["standardize"],
        normalize=header["normalize"],
        dtype=np.dtype(header["dtype"]),
        mean=arrays["mean"],
        scale=arrays["scale"],
        trace_scales=arrays["trace_scales"],
        X_fit=arrays["support_vectors"],
    )
    return _fill_fitted(model, header, arrays)


def _rebuild_product(header, arrays):
    from mklearn.estimators import MKLClassifier
    from mklearn.products import FeatureProduct, FittedProduct

    params = dict(header["params"])
    model = MKLClassifier(**params, kernels=FeatureProduct(gamma=header["gamma"]))
    model.bank_ = None
    model.views_ = None
    model.product_ = FittedProduct(
        arrays["mean"],
        arrays["scale"],
        arrays["block_features"].astype(np.int64),
        arrays["block_codes"].astype(np.int64),
        float(header["gamma"]),
        list(header["block_names"]),
    )
    model.support_vectors_ = np.ascontiguousarray(arrays["support_vectors"], dtype=np.float64)
    return _fill_fitted(model, header, arrays)


def _fill_fitted(model, header, arrays):
    """The fitted attributes both formats share."""
    weights = arrays["kernel_weights"]
    model.kernel_weights_ = weights[0] if weights.shape[0] == 1 else weights
    model.dual_coef_ = arrays["dual_coef"]
    model.intercept_ = arrays["intercept"]
    n_sv = arrays["support_vectors"].shape[0]
    model.support_ = np.arange(n_sv)  # rows of the stored support vectors
    model.classes_ = np.array(
        header["classes"], dtype=object if header["classes_dtype"] == "O" else None
    )
    model.n_features_in_ = header["n_features_in"]
    model.n_train_ = n_sv
    model.kernel_names_ = header["kernel_names"]
    fit = header["fit"]
    binary = weights.shape[0] == 1
    model.objective_ = fit["objective"][0] if binary else np.array(fit["objective"])
    model.duality_gap_ = fit["duality_gap"][0] if binary else np.array(fit["duality_gap"])
    model.n_iter_ = fit["n_iter"][0] if binary else np.array(fit["n_iter"])
    return model
