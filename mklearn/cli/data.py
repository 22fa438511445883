"""What the command line offers: kernel families (``--kernels``) and every bundled data set
(``--dataset``), including the multi-view and sequence sets outside the numeric registry."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from mklearn import datasets
from mklearn.datasets._readers import _sniff_format
from mklearn.kernels import mwumkl_kernels
from mklearn.kernels.strings import wd_sub_kernels


@dataclass(frozen=True)
class Family:
    """A kernel family: what it is, which input it takes, and the estimator's ``kernels``."""

    description: str
    input: str  # "numeric" (X or views), "sequences", or "product"
    make: Callable[[], Any]


def _mwumkl_all():
    return mwumkl_kernels(per_feature=False)


def _wd(by):
    def make():
        return wd_sub_kernels(20, by=by)

    return make


FAMILIES = {
    "svc+simple_mkl": Family(
        "SVC()'s own kernel (RBF, gamma='scale', original feature scales) and the SimpleMKL "
        "family", "numeric", lambda: "svc+simple_mkl"),
    "svc+feature_rbf": Family(
        "SVC()'s own kernel on all features and an RBF of width 1 on each standardised "
        "feature (the estimators' default)", "numeric", lambda: "svc+feature_rbf"),
    "simple_mkl": Family(
        "SimpleMKL family: 10 RBF widths and polynomial degrees 1-3 on all features and on "
        "each feature, standardised, mean diagonal 1", "numeric", lambda: "simple_mkl"),
    "mwumkl": Family(
        "MWUMKL family: 9 RBF widths and polynomial degrees 1-3 on each feature, features as "
        "given, mean diagonal 1", "numeric", lambda: "mwumkl"),
    "mwumkl_all": Family(
        "MWUMKL's 12 kernels on all features (on each view of multi-view data), mean diagonal 1",
        "numeric", _mwumkl_all),
    "features": Family(
        "product of per-feature RBF kernels (one learned width each, standardised features)",
        "product", lambda: "features"),
    "wd_position": Family(
        "weighted-degree string kernel of order 20, one base kernel per block of 10 positions",
        "sequences", _wd("position")),
    "wd_kmer": Family(
        "weighted-degree string kernel of order 20, one base kernel per k-mer length",
        "sequences", _wd("kmer")),
}


@dataclass(frozen=True)
class ExtraSet:
    loader: Callable[[], tuple[Any, np.ndarray]]
    n_samples: int
    features: str
    input: str  # "views" or "sequences"
    kernels: str  # default family
    labels: str


EXTRA_SETS = {
    "mfeat": ExtraSet(datasets.load_mfeat, 2000, "649 in 6 views", "views", "mwumkl_all",
                      "digits 0-9 (10 classes)"),
    "splice": ExtraSet(datasets.load_splice, 3175, "sequences of 60 nt", "sequences",
                       "wd_position", "+1: exon-intron boundary"),
    "promoters": ExtraSet(datasets.load_promoters, 106, "sequences of 57 nt", "sequences",
                          "wd_position", "+1: promoter"),
    "c-elegans-acceptor": ExtraSet(datasets.load_c_elegans_acceptor, 2200,
                                   "sequences of 82 nt", "sequences", "wd_position",
                                   "+1: acceptor site"),
}


def all_datasets():
    """Rows (name, n_samples, features, task, labels) of every set ``--dataset`` takes."""
    rows = []
    for name in datasets.list_datasets():
        info = datasets.dataset_info(name)
        labels = info["positive_class"] if info["task"] == "classification" else "real targets"
        rows.append((name, info["n_samples"], str(info["n_features"]), info["task"], labels))
    for name, entry in EXTRA_SETS.items():
        rows.append((name, entry.n_samples, entry.features, "classification", entry.labels))
    return rows


def load(name):
    """(X, y, canonical name, task, input kind) of a bundled set."""
    key = name.strip().lower().replace("_", "-")
    if key in EXTRA_SETS:
        entry = EXTRA_SETS[key]
        X, y = entry.loader()
        return X, y, key, "classification", entry.input
    info = datasets.dataset_info(name)
    X, y = datasets.load_dataset(name)
    return X, y, info["name"], info["task"], "numeric"


def n_rows(X):
    return len(next(iter(X.values()))) if isinstance(X, dict) else len(X)


def take(X, rows):
    """Rows of X, for arrays, sequence arrays and dicts of views alike."""
    if isinstance(X, dict):
        return {key: view[rows] for key, view in X.items()}
    return X[rows]


def describe(X, kind):
    if kind == "views":
        widths = ", ".join(f"{k} {v.shape[1]}" for k, v in X.items())
        return f"{sum(v.shape[1] for v in X.values())} features in {len(X)} views ({widths})"
    if kind == "sequences":
        lengths = sorted({len(s) for s in X})
        return f"sequences of {lengths[0]}" + (f"-{lengths[-1]}" if len(lengths) > 1 else "") + \
            " letters"
    return f"{X.shape[1]} features"


def load_for_model(path, label_column, n_features):
    """(X, y) of a data file to predict with a model of ``n_features`` features
    (:func:`mklearn.datasets.load_data_file`).

    A LIBSVM file whose highest feature index is below ``n_features`` gets zero columns up
    to it, with a ``UserWarning`` that says so: LIBSVM leaves zeros out, so a feature zero on
    every line is absent from a file, but a file written for another model is then
    predicted from features it does not have.
    """
    libsvm = Path(path).is_file() and _sniff_format(Path(path)).startswith("libsvm")
    if label_column is not None or not libsvm:  # the reader's checks and messages
        return datasets.load_data_file(path, label_column=label_column, n_features=n_features)
    X, y = datasets.load_svmlight(path, dense=False)
    if X.shape[1] > n_features:  # refused, with the reader's message
        return datasets.load_svmlight(path, n_features=n_features)
    if X.shape[1] < n_features:
        warnings.warn(
            f"{path} has {X.shape[1]} features (its highest index), fewer than the model's "
            f"{n_features}: features {X.shape[1] + 1}-{n_features} are taken as zero; check "
            "that the file was written for this model", UserWarning, stacklevel=2)
        X = scipy.sparse.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return X.toarray(), y
