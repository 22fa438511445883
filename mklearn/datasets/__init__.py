"""Benchmark data sets bundled with mklearn and readers for user data files.

The bundled sets are the UCI / LIBSVM benchmarks used in the Multiple Kernel
Learning literature. Classification loaders return ``(X, y)`` with ``X`` float64
of shape (n_samples, n_features) and ``y`` int64 in {-1, +1}; the label coding,
missing-value handling, provenance and citation of each set are documented in
the loader docstrings and in ``SOURCES.md`` next to this file.
"""

from ._bundled import (
    load_abalone,
    load_australian,
    load_breast_cancer,
    load_diabetes,
    load_heart,
    load_house_votes,
    load_ionosphere,
    load_liver_disorders,
    load_mfeat,
    load_pima,
    load_sonar,
    load_wdbc,
    load_wpbc,
)
from ._readers import load_csv, load_data_file, load_svmlight
from ._registry import dataset_info, list_datasets, load_dataset
from ._sequences import (
    load_c_elegans_acceptor,
    load_c_elegans_acceptor_large,
    load_promoters,
    load_splice,
)

__all__ = [
    "dataset_info",
    "list_datasets",
    "load_abalone",
    "load_australian",
    "load_breast_cancer",
    "load_c_elegans_acceptor",
    "load_c_elegans_acceptor_large",
    "load_csv",
    "load_data_file",
    "load_dataset",
    "load_diabetes",
    "load_heart",
    "load_house_votes",
    "load_ionosphere",
    "load_liver_disorders",
    "load_mfeat",
    "load_pima",
    "load_promoters",
    "load_sonar",
    "load_splice",
    "load_svmlight",
    "load_wdbc",
    "load_wpbc",
]
