"""The SMO core shared by every inner SVM solve: C-SVC, epsilon-SVR and one-class, one QP."""

from mklearn.svm.smo import QPResult, one_class_dual, solve_qp, svc_dual, svr_dual

__all__ = ["QPResult", "one_class_dual", "solve_qp", "svc_dual", "svr_dual"]
