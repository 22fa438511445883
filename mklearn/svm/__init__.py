"""The SMO core shared by every inner SVM solve (C-SVC now; SVR and one-class by the same QP)."""

from mklearn.svm.smo import QPResult, solve_qp, svc_dual

__all__ = ["QPResult", "solve_qp", "svc_dual"]
