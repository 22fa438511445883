"""Sequence input of the MKL estimators: string kernels wherever kernels on X are accepted."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_consistent_length, column_or_1d

from .string_bank import StringColumns, StringKernelBank
from .strings import resolve_string_kernels

__all__ = ["fit_string_bank", "string_training_stack"]


def fit_string_bank(estimator: Any, X: Any, y: Any):
    """Fit a :class:`StringKernelBank` on the sequences X for ``estimator``: sets ``bank_``,
    ``n_train_`` and ``kernel_names_`` on it and returns y.

    Raises
    ------
    ValueError
        If X is not a 1-D array of sequences over the kernels' alphabet, lengths differ for a
        WD kernel, or X and y differ in length.
    """
    specs = resolve_string_kernels(estimator.kernels, X)
    bank = StringKernelBank(specs, normalize=estimator.kernel_normalization,
                            dtype=np.dtype(estimator.kernel_dtype))
    bank.fit(X)
    y = column_or_1d(y, warn=True)
    check_consistent_length(np.empty(bank.X_fit_.n_samples), y)
    estimator.__dict__.pop("n_features_in_", None)  # sequences have no feature count
    estimator.bank_ = bank
    estimator.n_train_ = bank.X_fit_.n_samples
    estimator.kernel_names_ = list(bank.kernel_names)
    return y


def string_training_stack(estimator: Any, columns: bool):
    """The training kernels of the estimator's fitted string bank (:func:`fit_string_bank`):
    the stack ``(n, n, m)`` or, with ``columns``, a :class:`StringColumns` provider; with
    ``columns=None`` the estimator's ``_plan_storage(n, m, False)`` chooses ("stack" or
    "rows")."""
    bank = estimator.bank_
    if columns is None:
        columns = estimator._plan_storage(bank.X_fit_.n_samples, bank.n_kernels, False) == "rows"
    if columns:
        return StringColumns(bank)
    return bank._stack(bank.X_fit_, bank.X_fit_, symmetric=True, kernels=None)
