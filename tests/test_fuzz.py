"""Fuzzing of the estimators and the command line with hypothesis.

Random shapes, dtypes, special values (NaN, inf, huge, tiny, empty), label types, parameter
and ``solver_options`` values, precomputed stacks and data-file contents go through every
estimator (several solvers each) and through ``mklearn.cli.main``. Every run must end in
exactly one of:

- a ``ValueError``/``TypeError`` raised by mklearn's own checks (or scikit-learn's input
  validation) with a message that is not a raw numpy/numba/scipy one;
- for the command line: exit status 0, or exit status 2 with one ``mklearn: error:`` line
  and no traceback;
- a fitted model whose weights are valid (finite, non-negative, one per kernel) and whose
  predictions on the training input are finite.

Budget: the default ("ci") profile keeps the whole file under about a minute on 2 cores.
``python benchmarks/fuzz_slow.py`` (``MKLEARN_FUZZ=slow``) runs the slow profile: 10x the
examples, new random ones each run, no deadline; about 5 minutes (not part of ``make test``).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import traceback
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mklearn import MKLClassifier, MKLRegressor, OneClassMKL
from mklearn.cli import main
from mklearn.kernels import RBF, Polynomial

PROFILES = {
    "ci": dict(max_examples=600, deadline=20_000),
    "slow": dict(max_examples=6000, deadline=None),
}
PROFILE = os.environ.get("MKLEARN_FUZZ", "ci")
BUDGET = settings(
    **PROFILES[PROFILE],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
    derandomize=PROFILE == "ci",  # the same examples on every CI run
    database=None,
)
CLI_BUDGET = settings(BUDGET, max_examples=max(PROFILES[PROFILE]["max_examples"] // 2, 1))

FAMILY = [RBF(sigma=1.0), Polynomial(degree=2)]
SPECIAL = [math.nan, math.inf, -math.inf, 1e300, -1e300, 1e-300, 1e308, 0.0, -0.0, 5e-324]

# messages of numpy, numba, scipy and Python itself that must never reach a user
RAW_MESSAGES = re.compile(
    r"could not convert|cannot reshape|not supported between instances|unexpected keyword|"
    r"setting an array element|operands could not be broadcast|out of bounds|"
    r"invalid literal for|ufunc|unhashable|has no len|object of type|NoneType|"
    r"index \d+ is out|numba|Cannot cast|Unknown label type: unknown|zero-size array|"
    r"must be real number, not|float\(\) argument",
)
# where our checks live: mklearn itself and scikit-learn's validation helpers
OWN_FRAMES = re.compile(
    r"[/\\]mklearn[/\\](?!.*[/\\]tests[/\\])|sklearn[/\\]utils[/\\](validation|"
    r"_param_validation|multiclass)\.py|sklearn[/\\]model_selection[/\\]_split\.py"
)


def _assert_own_error(exc):
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    message = str(exc)
    assert message.strip(), f"{type(exc).__name__} without a message"
    assert OWN_FRAMES.search(frame.filename), (
        f"{type(exc).__name__} raised outside mklearn's checks at {frame.filename}:"
        f"{frame.lineno}: {message}"
    )
    assert not RAW_MESSAGES.search(message), f"raw message reached the user: {message}"


def _assert_valid_model(model, X):
    weights = np.asarray(model.kernel_weights_, dtype=float)
    assert weights.shape[-1] == len(model.kernel_names_)
    assert np.all(np.isfinite(weights)) and np.all(weights >= 0), weights
    if isinstance(model, MKLRegressor):
        values = model.predict(X)
    else:
        values = model.decision_function(X)
        labels = model.predict(X)
        classes = getattr(model, "classes_", np.array([-1, 1]))
        assert np.isin(labels, classes).all()
    assert np.all(np.isfinite(values)), values


def _outcome(fit, X, X_bad=None):
    """Run ``fit``; classify the result as an own error or a valid model; then predict on
    ``X_bad`` (must be an own error or finite)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                model = fit()
            except (ValueError, TypeError) as exc:
                _assert_own_error(exc)
                return "error"
            _assert_valid_model(model, X)
            if X_bad is not None:
                try:
                    _assert_valid_model(model, X_bad)
                except (ValueError, TypeError) as exc:
                    _assert_own_error(exc)
    return "model"


def _spoilt(X, how):
    """A test input derived from the training input X, with one defect."""
    X = np.array(X, dtype=float)
    if X.ndim == 0:
        return None
    if how == "nan" and X.size:
        X.flat[0] = math.nan
    elif how == "huge" and X.size:
        X.flat[0] = 1e308
    elif how == "narrow":
        X = X[..., :-1]
    elif how == "wide":
        X = np.concatenate([X, X[..., :1]], axis=-1)
    elif how == "empty":
        X = X[:0]
    elif how == "strings":
        X = X.astype(str)
    return X


# ------------------------------------------------------------------------ strategies
ESTIMATORS = {
    "clf-spg": lambda k, **kw: MKLClassifier(kernels=k, solver="spg", **kw),
    "clf-pgd": lambda k, **kw: MKLClassifier(kernels=k, solver="pgd", **kw),
    "clf-smo": lambda k, **kw: MKLClassifier(kernels=k, solver="smo", regularizer="lp", **kw),
    "clf-mwu": lambda k, **kw: MKLClassifier(kernels=k, solver="mwu", **kw),
    "clf-mirror": lambda k, **kw: MKLClassifier(kernels=k, solver="mirror", **kw),
    "clf-group": lambda k, **kw: MKLClassifier(kernels=k, solver="mirror", regularizer="group",
                                               **kw),
    "clf-kl": lambda k, **kw: MKLClassifier(kernels=k, solver="smo", regularizer="kl", **kw),
    "clf-product": lambda k, **kw: MKLClassifier(
        kernels=k if isinstance(k, list) else
        {"simple_mkl": "features", "precomputed": "precomputed_distances"}[k],
        combination="product", **kw),
    "clf-silp": lambda k, **kw: MKLClassifier(kernels=k, solver="silp", **kw),
    "reg-smo": lambda k, **kw: MKLRegressor(kernels=k, solver="smo", **kw),
    "reg-silp": lambda k, **kw: MKLRegressor(kernels=k, solver="silp", regularizer="l1", **kw),
    # unit trace: with mean-diagonal kernels one drawn case ran 39 s
    "reg-spg": lambda k, **kw: MKLRegressor(kernels=k, solver="spg", regularizer="l1",
                                            kernel_normalization="trace", **kw),
    "oc-silp": lambda k, **kw: OneClassMKL(kernels=k, solver="silp", **kw),
    "oc-spg": lambda k, **kw: OneClassMKL(kernels=k, solver="spg", **kw),
}
OPTIONS = st.sampled_from([
    None, {}, {"bogus": 1}, {"spectral": "yes"}, {"inner_tol": -1.0}, {"inner_tol": 1e-4},
    {"cache_size": 1e-9}, {"cache_size": 50.0}, {"epsilon": 0.5}, {"epsilon": 2},
    {"interleaved": True}, {"chunk_steps": 0}, {"step": "paper"}, {"closed_form": 1},
    {"variant": "paper"}, {"max_time": math.nan}, ["not", "a", "dict"],
])
NUMBERS = st.sampled_from([1.0, 10.0, 0.0, -1.0, math.nan, math.inf, 1e300, 1e-300, "1", None])


@st.composite
def parameters(draw, name, clean=False):
    kw = {"max_iter": draw(st.sampled_from([1, 3, 10] if clean else [1, 3, 0, -2, 2.5]))}
    if clean:
        if not name.startswith("oc"):
            kw["C"] = draw(st.sampled_from([0.01, 1.0, 100.0, 1e6]))
        return kw
    if draw(st.booleans()):
        kw["solver_options"] = draw(OPTIONS)
    if name.startswith("oc"):
        if draw(st.booleans()):
            kw["nu"] = draw(st.sampled_from([0.5, 0.1, 1.0, 0.0, 1.5, math.nan]))
    elif draw(st.booleans()):
        kw["C"] = draw(NUMBERS)
    if name.startswith("reg") and draw(st.booleans()):
        kw["epsilon"] = draw(st.sampled_from([0.1, 0.0, -1.0, 1e300, math.nan]))
    if name in ("clf-smo", "reg-smo") and draw(st.booleans()):
        kw["p"] = draw(st.sampled_from([2.0, 1.0, 1.5, -1.0, math.inf]))
    if draw(st.booleans()):
        kw["tol"] = draw(st.sampled_from([1e-3, 0.0, -1.0, 1e-12, math.nan]))
    return kw


@st.composite
def matrices(draw, clean=False):
    """Feature matrices of random shape, dtype and special values (or a non-array); with
    ``clean`` valid ones of any scale."""
    n = draw(st.sampled_from([4, 6, 10, 30]) if clean else st.integers(0, 9))
    d = draw(st.integers(1, 3) if clean else st.integers(0, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.normal(size=(n, d)) * draw(st.sampled_from([1.0, 1.0, 1e300, 1e-300, 0.0, 1e150]))
    if clean:
        return X
    if n and d and draw(st.booleans()):
        where = draw(st.sampled_from(["one", "column", "all"]))
        value = draw(st.sampled_from(SPECIAL))
        if where == "one":
            X[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = value
        elif where == "column":
            X[:, draw(st.integers(0, d - 1))] = value
        else:
            X[:] = value
    kind = draw(st.sampled_from(["float64", "float64", "float32", "int", "bool", "object",
                                 "str", "complex", "list", "1d", "3d", "none", "views",
                                 "views-ragged"]))
    with np.errstate(all="ignore"):
        return _convert(X, kind)


def _convert(X, kind):
    return {
        "float64": lambda: X,
        "float32": lambda: X.astype(np.float32),
        "int": lambda: np.nan_to_num(X, posinf=0, neginf=0).astype(np.int64),
        "bool": lambda: X > 0,
        "object": lambda: _with_strings(X),
        "str": lambda: X.astype(str),
        "complex": lambda: X + 1j,
        "list": lambda: X.tolist(),
        "1d": lambda: X.ravel(),
        "3d": lambda: X[:, :, None],
        "none": lambda: None,
        "views": lambda: {"a": X, "b": X[:, :1]},  # multi-view input
        "views-ragged": lambda: [X, X[:-1]],
    }[kind]()


def _n_samples(X):
    """Rows of X as given: of its first view for multi-view input; 0 for scalars and None."""
    if isinstance(X, dict):
        X = next(iter(X.values()), None)
    elif isinstance(X, list) and X and isinstance(X[0], np.ndarray) and X[0].ndim == 2:
        X = X[0]
    return len(X) if X is not None and np.ndim(X) else 0


def _with_strings(X):
    mixed = X.astype(object)
    mixed[X > 0] = "a"
    return mixed


@st.composite
def stacks(draw, clean=False):
    """Precomputed kernel stacks: valid ones, and ones with each kind of defect."""
    n = draw(st.sampled_from([4, 6, 10, 30]) if clean else st.integers(0, 9))
    m = draw(st.integers(1, 3) if clean else st.integers(0, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    Z = rng.normal(size=(n, 2))
    sq = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    base = [np.exp(-sq), Z @ Z.T, (1 + Z @ Z.T) ** 2, np.ones((n, n))]
    K = np.stack([base[k % 4] for k in range(m)], axis=-1) if m else np.zeros((n, n, 0))
    K = K * draw(st.sampled_from([1.0, 1.0, 0.0, 1e200, 1e-200, 1e120]))
    defect = "none" if clean else draw(st.sampled_from(
        ["none", "negate", "asym", "special", "shape", "2d"]))
    if defect == "negate" and m:
        K[:, :, 0] = -K[:, :, 0]
    elif defect == "asym" and n > 1 and m:
        K[0, 1, 0] += 1.0
    elif defect == "special" and K.size:
        K.flat[draw(st.integers(0, K.size - 1))] = draw(st.sampled_from(SPECIAL))
    elif defect == "shape":
        K = K[:, : max(n - 1, 0)]
    elif defect == "2d" and m:
        K = K[:, :, 0]
    return K


@st.composite
def labels(draw, n, clean=False):
    """Labels of random type for n samples (sometimes of the wrong length); with ``clean``
    class labels of one type, every class present at least twice."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if clean:
        n_classes = draw(st.integers(2, 3))
        codes = rng.permutation(np.arange(n) % n_classes)
        kind = draw(st.sampled_from(["pm1", "int", "str", "bool"] if n_classes == 2
                                    else ["int", "str"]))
        length = n
    else:
        length = draw(st.sampled_from([n, n, n, max(n - 1, 0), n + 1]))
        codes = rng.integers(0, draw(st.integers(1, 3)), size=length)
        kind = draw(st.sampled_from(["pm1", "int", "str", "mixed", "float", "bool", "nan",
                                     "big", "object-none", "2d", "none"]))
    return {
        "pm1": lambda: np.where(codes > 0, 1, -1),
        "int": lambda: codes,
        "str": lambda: np.array(["a", "b", "c"])[codes],
        "mixed": lambda: np.array([1, "a", 2.5], dtype=object)[codes],
        "float": lambda: rng.normal(size=length),
        "bool": lambda: codes > 0,
        "nan": lambda: np.where(codes > 0, 1.0, math.nan),
        "big": lambda: codes * 1e300,
        "object-none": lambda: np.array([1, None, 2], dtype=object)[codes],
        "2d": lambda: codes[:, None],
        "none": lambda: None,
    }[kind]()


# ----------------------------------------------------------------------------- tests
@BUDGET
@given(data=st.data(), name=st.sampled_from(sorted(ESTIMATORS)),
       kernels=st.sampled_from(["simple_mkl", "family", "precomputed"]))
def test_estimators_end_in_an_own_error_or_a_valid_model(data, name, kernels):
    precomputed = kernels == "precomputed"
    clean = data.draw(st.booleans(), label="clean")  # half the runs: valid input, any scale
    X = data.draw(stacks(clean) if precomputed else matrices(clean), label="X")
    n = _n_samples(X)
    if name.startswith("oc"):
        y = None
    elif name.startswith("reg") and clean:
        y = np.random.default_rng(n).normal(size=n)
    else:
        y = data.draw(labels(n, clean), label="y")
    params = data.draw(parameters(name, clean), label="params")
    estimator = ESTIMATORS[name](FAMILY if kernels == "family" else kernels, **params)
    how = data.draw(st.sampled_from(["nan", "huge", "narrow", "wide", "empty", "strings"]))
    try:
        X_bad = _spoilt(X, how)
    except (ValueError, TypeError):  # X itself is not an array
        X_bad = None
    event(_outcome(lambda: estimator.fit(X, y), X, X_bad))


# ----------------------------------------------------------------------- command line
TOKENS = ["0.5", "-1", "2", "1e300", "1e-300", "nan", "inf", "?", "", "abc", "1e999", "0"]


@st.composite
def data_files(draw):
    """Contents of a --data file (CSV, whitespace, LIBSVM or garbage) and its encoding."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    clean = draw(st.booleans())  # half the files are valid: the fit itself gets fuzzed
    n = draw(st.integers(10, 16) if clean else st.integers(0, 14))
    d = draw(st.integers(1, 3))
    fmt = draw(st.sampled_from(["csv", "spaces", "libsvm"] if clean else
                               ["csv", "spaces", "libsvm", "garbage"]))
    label_kind = draw(st.sampled_from(["pm1", "str", "float"] if clean else
                                      ["pm1", "str", "float", "single", "mixed"]))
    special = None if clean else draw(st.sampled_from([None, *TOKENS]))
    header = ",".join([*(f"f{j}" for j in range(d)), "label"])
    lines = [header] if fmt == "csv" and draw(st.booleans()) else []
    for i in range(n):
        values = [f"{v:.4g}" for v in rng.normal(size=d)]
        if special is not None and rng.random() < 0.3:
            values[int(rng.integers(0, d))] = special
        label = {"pm1": str(1 if i % 2 else -1), "str": "yes" if i % 2 else "no",
                 "float": f"{rng.normal():.3f}", "single": "1",
                 "mixed": "a" if i % 3 == 0 else str(i % 2)}[label_kind]
        if fmt == "csv":
            lines.append(",".join([*values, label]))
        elif fmt == "spaces":
            lines.append(" ".join([*values, label]))
        elif fmt == "libsvm":
            index = draw(st.sampled_from([1] if clean else [1, 2, 0, 7, 1000]))
            lines.append(f"{label} " + " ".join(f"{index + j}:{v}" for j, v in enumerate(values)))
        else:
            lines.append(draw(st.text(max_size=12)))
    text = "\n".join(lines) + ("\n" if lines else "")
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig"] if clean else
                                    ["utf-8", "utf-16", "utf-8-sig", "latin-1"]))
    return text.encode(encoding, errors="replace")


CLI_OPTIONS = {
    "--task": ["classification", "regression", "one-class", "one-class"],
    "--nu": ["0.1", "0", "1.5", "nan"],
    "--inlier-class": ["1", "-1", "yes", "absent"],
    "--solver": ["spg", "smo", "mwu", "silp", "pgd", "mirror"],
    "--regularizer": ["l1", "lp", "kl", "group"],
    "-C": ["1", "0", "-1", "nan", "inf", "1e300"],
    "--max-iter": ["3", "0", "-1"],
    "--test-size": ["0.3", "0", "1.5"],
    "--cv": ["2", "3", "1", "0"],
    "--label-column": ["0", "-1", "7"],
    "-p": ["2", "1", "-1"],
    "--lam": ["1", "0", "-1"],
    "--epsilon": ["0.1", "-1", "1e300"],
    "--cache-size": ["1e-9", "-1", "10", "auto"],
    "--combination": ["sum", "product"],
}


@CLI_BUDGET
@given(data=st.data(), content=data_files())
def test_command_line_exits_0_or_2_with_one_error_line(data, content, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    path = folder / "data.csv"
    path.write_bytes(content)
    argv = ["fit", "--data", str(path), "--json", "--max-iter", "3"]
    for option in data.draw(st.sets(st.sampled_from(sorted(CLI_OPTIONS)), max_size=4)):
        if option == "--cv" and "--test-size" in argv:
            continue
        if option == "--test-size" and "--cv" in argv:
            continue
        argv += [option, data.draw(st.sampled_from(CLI_OPTIONS[option]))]
    for flag in data.draw(st.sets(st.sampled_from(["--interleaved", "--save"]), max_size=2)):
        argv.append(flag)
        if flag == "--save":
            argv.append(str(data.draw(st.sampled_from(
                [folder / "m.npz", folder / "missing" / "m.npz", folder]))))
    status = _run_cli(argv)
    event(f"exit {status}")
    saved = folder / "m.npz"
    if status == 0 and saved.exists():  # the saved model predicts on its own data
        assert _run_cli(["predict", str(saved), "--data", str(path)]) == 0


@CLI_BUDGET
@given(model=st.sampled_from(["missing", "garbage", "empty"]), content=data_files(),
       output=st.sampled_from([None, "ok", "missing-dir"]))
def test_predict_exits_2_with_one_error_line(model, content, output, tmp_path_factory):
    folder = tmp_path_factory.mktemp("predict")
    data_path = folder / "data.csv"
    data_path.write_bytes(content)
    model_path = folder / "model.npz"
    if model == "garbage":
        model_path.write_bytes(b"PK\x03\x04 not really a zip")
    elif model == "empty":
        model_path.write_bytes(b"")
    argv = ["predict", str(model_path), "--data", str(data_path)]
    if output:
        argv += ["--output", str(folder / ("missing" if output != "ok" else "") / "out.txt")]
    assert _run_cli(argv) == 2


def _run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse: only for values it cannot parse
            status = exc.code
    stderr = err.getvalue()
    assert "Traceback" not in stderr, stderr
    assert status in (0, 2), (argv, status, stderr)
    if status == 2:
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("mklearn: error: "), (argv, stderr)
        assert not RAW_MESSAGES.search(lines[0]), (argv, lines[0])
    return status


# ---------------------------------------------------------------------- string kernels
STRING_BUDGET = settings(BUDGET, max_examples=max(PROFILES[PROFILE]["max_examples"] // 12, 1))
ALPHABETS = ["ACGT", "AC", "ACDEFGHIKLMNPQRSTVWY", "01"]
BAD_ALPHABETS = ["", "AAC", "AC\u00e9", 5, None]
INTRUDERS = ["", "x", "N", "\u00e9", None, b"AC", 3]


@st.composite
def sequences(draw, alphabet, clean):
    """Sequences over ``alphabet`` (any case), of one or several lengths; unless ``clean``
    sometimes with an intruder (empty, foreign letter, non-str) or in another container."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = draw(st.integers(4, 12) if clean else st.integers(0, 9))
    lengths = np.full(n, draw(st.integers(1, 10)))
    if draw(st.booleans()):
        lengths = rng.integers(1, 11, size=n)
    letters = list(alphabet) + [c.lower() for c in alphabet]
    X = ["".join(rng.choice(letters, size=int(length))) for length in lengths]
    if clean:
        return X
    if n and draw(st.booleans()):
        X[draw(st.integers(0, n - 1))] = draw(st.sampled_from(INTRUDERS))
    container = draw(st.sampled_from(["list", "str-array", "object-array", "column", "one-str"]))
    return {
        "list": lambda: X,
        "str-array": lambda: np.array([str(s) for s in X]),
        "object-array": lambda: np.array(X, dtype=object),
        "column": lambda: np.array(X, dtype=object)[:, None],
        "one-str": lambda: "".join(str(s) for s in X),
    }[container]()


def _string_kernels(kind, order, alphabet):
    from mklearn.kernels.strings import Spectrum, WeightedDegree, wd_sub_kernels

    return {
        "spectrum": lambda: [Spectrum(order, alphabet=alphabet)],
        "spectrum-pair": lambda: [Spectrum(1, alphabet=alphabet),
                                  Spectrum(order, alphabet=alphabet)],
        "wd": lambda: WeightedDegree(order, alphabet=alphabet),
        "wd-kmer": lambda: wd_sub_kernels(order, by="kmer", alphabet=alphabet),
        "wd-position": lambda: wd_sub_kernels(order, by="position", block_size=3,
                                              alphabet=alphabet),
    }[kind]()


@STRING_BUDGET
@given(data=st.data(), kind=st.sampled_from(["spectrum", "spectrum-pair", "wd", "wd-kmer",
                                             "wd-position"]),
       solver=st.sampled_from(["auto", "spg", "silp", "smo"]))
def test_string_kernels_end_in_an_own_error_or_a_valid_model(data, kind, solver):
    clean = data.draw(st.booleans(), label="clean")
    alphabet = data.draw(st.sampled_from(ALPHABETS if clean else ALPHABETS + BAD_ALPHABETS))
    # orders up to 12 are often longer than every string (length 1-10)
    order = data.draw(st.integers(1, 12) if clean else st.sampled_from([1, 3, 12, 0, -1, 2.5]))
    X = data.draw(sequences(alphabet if isinstance(alphabet, str) and alphabet else "ACGT",
                            clean), label="X")
    n = _n_samples(X) if not isinstance(X, str) else 1
    y = data.draw(labels(n, clean), label="y")
    X_bad = data.draw(st.sampled_from([["ACGU"] * 3, ["A" * 40] * 2, [""], np.zeros((3, 2)),
                                       X]))

    def fit():
        kernels = _string_kernels(kind, order, alphabet)
        return MKLClassifier(kernels=kernels, solver=solver, max_iter=10).fit(X, y)

    event(_outcome(fit, X, X_bad))


@settings(STRING_BUDGET, max_examples=max(PROFILES[PROFILE]["max_examples"] // 30, 1))
@given(data=st.data(), kind=st.sampled_from(["spectrum", "spectrum-pair", "wd"]))
def test_string_kernels_that_cannot_vary_warn_of_a_constant_model(data, kind):
    """Spectrum orders longer than every string, or one string repeated: every kernel is
    constant on the training strings."""
    from mklearn.validation import DegenerateModelWarning

    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    n = data.draw(st.integers(4, 10))
    length = data.draw(st.integers(1, 5))
    X = ["".join(rng.choice(list("ACGT"), size=length)) for _ in range(n)]
    if kind != "spectrum" or data.draw(st.booleans()):
        X = [X[0]] * n
    order = data.draw(st.integers(length + 1, 12))
    y = np.arange(n) % 2
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        model = MKLClassifier(kernels=_string_kernels(kind, order, "ACGT"), max_iter=10)
        try:
            model.fit(X, y)
        except ValueError as exc:
            _assert_own_error(exc)
            return
    decision = model.decision_function(X)
    assert np.ptp(decision) <= 1e-9 * max(1.0, float(np.max(np.abs(decision))))
    assert any(issubclass(w.category, DegenerateModelWarning) for w in caught), \
        "a constant model without a DegenerateModelWarning"


# --------------------------------------------------------------------------- pipelines
PIPELINE_BUDGET = settings(BUDGET, max_examples=max(PROFILES[PROFILE]["max_examples"] // 12, 1))


@PIPELINE_BUDGET
@given(data=st.data(), solver=st.sampled_from(["auto", "spg", "smo", "mwu"]),
       kernels=st.sampled_from(["simple_mkl", "family"]))
def test_pipelines_end_in_an_own_error_or_a_model_that_round_trips(data, solver, kernels,
                                                                  tmp_path_factory):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mklearn import load_model, save_model

    clean = data.draw(st.booleans(), label="clean")
    X = data.draw(matrices(clean), label="X")
    y = data.draw(labels(_n_samples(X), clean), label="y")
    params = data.draw(parameters("clf-spg", clean), label="params")
    pipe = make_pipeline(StandardScaler(), MKLClassifier(
        kernels=FAMILY if kernels == "family" else kernels, solver=solver, **params))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            pipe.fit(X, y)
        except (ValueError, TypeError) as exc:
            if _raised_by_the_scaler(exc):  # scikit-learn's StandardScaler: its own checks
                event("scaler's error")
                return
            _assert_own_error(exc)
            event("error")
            return
        X = np.asarray(X, dtype=float)
        _assert_valid_model(pipe[-1], pipe[:-1].transform(X))
        decision = pipe.decision_function(X)
        assert np.all(np.isfinite(decision))
        path = tmp_path_factory.mktemp("pipe") / "pipe.npz"
        try:
            save_model(pipe, path)  # a saved pipeline predicts as the fitted one
        except ValueError as exc:  # it holds values the loader would refuse
            assert "NaN or infinite values" in str(exc) and not path.exists()
            event("refused at save time")
            return
        np.testing.assert_allclose(load_model(path).decision_function(X), decision,
                                   rtol=1e-12, atol=1e-12)
    event("model")


def _raised_by_the_scaler(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    return any(re.search(r"sklearn[/\\]preprocessing[/\\]", f.filename) for f in frames)


# ------------------------------------------------------------------------ model loader
LOADER_BUDGET = settings(BUDGET, max_examples=max(PROFILES[PROFILE]["max_examples"] // 3, 1))
LOADER_X = np.random.default_rng(1).normal(size=(12, 3))


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    """Valid model files of several kinds, with the decision values of the fitted models."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mklearn import save_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    y3 = np.digitize(X[:, 1], [-0.4, 0.4])
    models = {
        "binary": MKLClassifier(kernels=FAMILY, max_iter=20).fit(X, y),
        "3-class-platt": MKLClassifier(kernels=FAMILY, max_iter=20, probability=True,
                                       class_weight={0: 2.0, 1: 1.0, 2: 1.0}).fit(X, y3),
        "product": MKLClassifier(kernels="features", combination="product",
                                 max_iter=20).fit(X, y),
        "regressor": MKLRegressor(kernels=FAMILY, max_iter=20).fit(X, X[:, 0]),
        "one-class": OneClassMKL(kernels=FAMILY, max_iter=20).fit(X),
        "pipeline": make_pipeline(StandardScaler(), MKLClassifier(kernels=FAMILY,
                                                                  max_iter=20)).fit(X, y),
    }
    folder = tmp_path_factory.mktemp("models")
    files = {}
    for name, model in models.items():
        save_model(model, folder / f"{name}.npz")
        files[name] = ((folder / f"{name}.npz").read_bytes(), _loaded_values(model))
    return files


def _loaded_values(model):
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    if isinstance(final, MKLRegressor):
        return model.predict(LOADER_X)
    return model.decision_function(LOADER_X)


def _byte_edit(data, draw):
    raw = bytearray(data)
    how = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "append"]))
    at = draw(st.integers(0, len(raw) - 1))
    if how == "flip":
        raw[at] ^= 1 << draw(st.integers(0, 7))
    elif how == "set":
        raw[at] = draw(st.sampled_from([0, 255, ord("9"), ord("e"), ord("-")]))
    elif how == "insert":
        raw[at:at] = draw(st.binary(min_size=1, max_size=8))
    elif how == "delete":
        del raw[at:at + draw(st.integers(1, 16))]
    elif how == "truncate":
        del raw[at:]
    else:
        raw += draw(st.binary(min_size=1, max_size=64))
    return bytes(raw), how


def _member_edit(data, draw):
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = [(name, archive.read(name)) for name in archive.namelist()]
    how = draw(st.sampled_from(["duplicate", "drop", "rename", "add"]))
    i = draw(st.integers(0, len(members) - 1))
    name, content = members[i]
    if how == "duplicate":
        members.insert(draw(st.integers(0, len(members))), (name, content))
    elif how == "drop":
        del members[i]
    elif how == "rename":
        members[i] = (draw(st.sampled_from(["probA.npy", "x.npy", "header", name.upper(),
                                            "step0.mean_.npy", "../" + name])), content)
    elif how == "add":
        other = members[draw(st.integers(0, len(members) - 1))][1]
        members.append((draw(st.sampled_from(["extra.npy", "notes.txt", "probB.npy"])), other))
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name
        with zipfile.ZipFile(buffer, "w") as archive:
            for member, payload in members:
                archive.writestr(member, payload)
    return buffer.getvalue(), how


LOADER_ERRORS = re.compile(
    r"is a damaged mklearn model file|is not an mklearn model file|model format version|"
    r"no valid model format version"
)


@LOADER_BUDGET
@given(data=st.data(), kind=st.sampled_from(["binary", "3-class-platt", "product",
                                             "regressor", "one-class", "pipeline"]),
       edit=st.sampled_from(["bytes", "members"]))
def test_loader_refuses_edited_files_or_loads_the_same_model(data, kind, edit, model_files,
                                                            tmp_path_factory):
    from mklearn import load_model

    original, expected = model_files[kind]
    edited, how = (_byte_edit if edit == "bytes" else _member_edit)(original, data.draw)
    path = tmp_path_factory.mktemp("edited") / "m.npz"
    path.write_bytes(edited)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            model = load_model(path)
        except ValueError as exc:
            assert LOADER_ERRORS.search(str(exc)), f"{how}: {exc}"
            assert path.read_bytes() == edited  # a refused load changes nothing
            event(f"{how}: refused")
            return
        # loaded: only edits that leave the model intact (zip comment, timestamps, bytes
        # after the archive) may load, and the model must be the saved one
        np.testing.assert_array_equal(_loaded_values(model), expected, err_msg=how)
    event(f"{how}: same model")
