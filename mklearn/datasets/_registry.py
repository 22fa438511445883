"""Name-based access to the bundled data sets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import mklearn.datasets._bundled as _bundled


@dataclass(frozen=True)
class _DatasetEntry:
    name: str
    loader: Callable[[], tuple[np.ndarray, np.ndarray]]
    n_samples: int
    n_features: int
    task: str
    positive_class: str
    citation: str


_STATLOG = (
    "D. Michie, D. J. Spiegelhalter, C. C. Taylor (eds.) (1994), Machine Learning, "
    "Neural and Statistical Classification, Ellis Horwood"
)

_ENTRIES = {
    entry.name: entry
    for entry in (
        _DatasetEntry(
            "sonar",
            _bundled.load_sonar,
            208,
            60,
            "classification",
            "M (mine) = +1; R (rock) = -1",
            "R. P. Gorman and T. J. Sejnowski (1988), Analysis of hidden units in a layered "
            "network trained to classify sonar targets, Neural Networks 1:75-89",
        ),
        _DatasetEntry(
            "ionosphere",
            _bundled.load_ionosphere,
            351,
            34,
            "classification",
            "g (good radar return) = +1; b (bad) = -1",
            "V. G. Sigillito, S. P. Wing, L. V. Hutton, K. B. Baker (1989), Classification of "
            "radar returns from the ionosphere using neural networks, Johns Hopkins APL "
            "Technical Digest 10:262-266",
        ),
        _DatasetEntry(
            "liver-disorders",
            _bundled.load_liver_disorders,
            345,
            6,
            "classification",
            "selector 2 = +1; selector 1 = -1 (column 7 used as class, see "
            "McDermott & Forsyth 2016)",
            "BUPA Medical Research Ltd. (donor R. S. Forsyth, 1990), UCI Liver Disorders; "
            "J. McDermott and R. S. Forsyth (2016), Diagnosing a disorder in a classification "
            "benchmark, Pattern Recognition Letters 73:41-43",
        ),
        _DatasetEntry(
            "australian",
            _bundled.load_australian,
            690,
            14,
            "classification",
            "class 1 = +1; class 0 = -1",
            f"{_STATLOG}; J. R. Quinlan (1987), Simplifying decision trees, Int. J. "
            "Man-Machine Studies 27:221-234",
        ),
        _DatasetEntry(
            "breast-cancer",
            _bundled.load_breast_cancer,
            683,
            9,
            "classification",
            "class 4 (malignant) = +1; class 2 (benign) = -1",
            "W. H. Wolberg and O. L. Mangasarian (1990), Multisurface method of pattern "
            "separation for medical diagnosis applied to breast cytology, PNAS 87:9193-9196",
        ),
        _DatasetEntry(
            "pima",
            _bundled.load_pima,
            768,
            8,
            "classification",
            "class 1 (tested positive for diabetes) = +1; class 0 = -1",
            "J. W. Smith, J. E. Everhart, W. C. Dickson, W. C. Knowler, R. S. Johannes (1988), "
            "Using the ADAP learning algorithm to forecast the onset of diabetes mellitus, "
            "Proc. Symp. Computer Applications in Medical Care, 261-265",
        ),
        _DatasetEntry(
            "wpbc",
            _bundled.load_wpbc,
            194,
            33,
            "classification",
            "outcome R (recurrent) = +1; N (non-recurrent) = -1",
            "W. N. Street, O. L. Mangasarian, W. H. Wolberg (1995), An inductive learning "
            "approach to prognostic prediction, Proc. ICML-95, 522-530",
        ),
        _DatasetEntry(
            "heart",
            _bundled.load_heart,
            270,
            13,
            "classification",
            "class 2 (heart disease present) = +1; class 1 (absent) = -1",
            f"{_STATLOG}; R. Detrano et al. (1989), Am. J. Cardiology 64:304-310",
        ),
        _DatasetEntry(
            "house-votes",
            _bundled.load_house_votes,
            435,
            16,
            "classification",
            "republican = +1; democrat = -1",
            "J. C. Schlimmer (1987), Concept acquisition through representational "
            "adjustment, PhD thesis, University of California, Irvine",
        ),
        _DatasetEntry(
            "wdbc",
            _bundled.load_wdbc,
            569,
            30,
            "classification",
            "M (malignant) = +1; B (benign) = -1",
            "W. N. Street, W. H. Wolberg, O. L. Mangasarian (1993), Nuclear feature "
            "extraction for breast tumor diagnosis, IS&T/SPIE Symp. Electronic Imaging "
            "1905:861-870",
        ),
        _DatasetEntry(
            "abalone",
            _bundled.load_abalone,
            4177,
            8,
            "regression",
            "none (regression; target = number of rings)",
            "W. J. Nash, T. L. Sellers, S. R. Talbot, A. J. Cawthorn, W. B. Ford (1994), The "
            "Population Biology of Abalone (Haliotis species) in Tasmania, Sea Fisheries "
            "Division, Technical Report No. 48; C.-C. Chang and C.-J. Lin (2011), LIBSVM: a "
            "library for support vector machines, ACM TIST 2(3):27",
        ),
    )
}

# Extra accepted names (after lower-casing and turning "_" / spaces into "-").
_ALIASES = {
    "liver": "liver-disorders",
    "bupa": "liver-disorders",
    "statlog-australian": "australian",
    "breast-cancer-wisconsin": "breast-cancer",
    "diabetes": "pima",
    "pima-indians-diabetes": "pima",
    "statlog-heart": "heart",
    "votes": "house-votes",
    "house-votes-84": "house-votes",
    "abalone-scale": "abalone",
}


def list_datasets() -> list[str]:
    """Return the names of the bundled data sets.

    Returns
    -------
    names : list of str
        Sorted canonical names accepted by :func:`load_dataset` and
        :func:`dataset_info`.
    """
    return sorted(_ENTRIES)


def _lookup(name: str) -> _DatasetEntry:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key, key)
    if key not in _ENTRIES:
        raise ValueError(
            f"unknown dataset {name!r}; available datasets: {', '.join(list_datasets())}"
        )
    return _ENTRIES[key]


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Load a bundled data set by name.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`, case-insensitive, with ``_`` and ``-``
        interchangeable. Aliases: ``liver`` / ``bupa`` (liver-disorders),
        ``diabetes`` / ``pima-indians-diabetes`` (pima),
        ``breast-cancer-wisconsin`` (breast-cancer), ``votes`` /
        ``house-votes-84`` (house-votes), ``statlog-australian``,
        ``statlog-heart`` and ``abalone-scale``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        Feature matrix.
    y : ndarray of shape (n_samples,)
        int64 labels in {-1, +1} for classification sets, float64 targets for
        regression sets (see :func:`dataset_info`).

    Raises
    ------
    ValueError
        If ``name`` is not a known data set; the message lists the available
        names.
    TypeError
        If ``name`` is not a string.
    """
    return _lookup(name).loader()


def dataset_info(name: str) -> dict[str, Any]:
    """Describe a bundled data set without loading it.

    Parameters
    ----------
    name : str
        Data set name or alias, as accepted by :func:`load_dataset`.

    Returns
    -------
    info : dict
        Keys ``name`` (canonical name, str), ``n_samples`` (int),
        ``n_features`` (int), ``task`` (``"classification"`` or
        ``"regression"``), ``positive_class`` (str describing which original
        class is +1 and which is -1) and ``citation`` (str).

    Raises
    ------
    ValueError
        If ``name`` is not a known data set.
    TypeError
        If ``name`` is not a string.
    """
    entry = _lookup(name)
    return {
        "name": entry.name,
        "n_samples": entry.n_samples,
        "n_features": entry.n_features,
        "task": entry.task,
        "positive_class": entry.positive_class,
        "citation": entry.citation,
    }
