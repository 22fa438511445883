"""The scikit-learn checks every mklearn estimator is expected to fail, with the reason."""

SOLVER_PRECISION = {
    "check_sample_weight_equivalence_on_dense_data": (
        "the solvers stop at a relative duality gap of tol: weighted and repeated fits "
        "agree to about 1e-6, not the check's 1e-7 (test_sample_weight_is_repetition "
        "checks the equivalence at the solvers' precision)"
    ),
    "check_sample_weight_equivalence_on_sparse_data": (
        "as on dense data: the solvers' tol, not the check's 1e-7"
    ),
}


def expected_failed_checks(estimator):
    """``parametrize_with_checks``' ``expected_failed_checks`` for any mklearn estimator."""
    return SOLVER_PRECISION
