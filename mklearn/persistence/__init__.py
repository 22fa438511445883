"""Saving and loading fitted models without pickle.

A model file is an ``.npz`` archive (a zip of ``.npy`` arrays, never unpickled) with a JSON
header in the array ``header`` (format name and version, estimator and its parameters, kernel
specs, classes, declared sizes) and plain numeric arrays: kernel weights, dual coefficients,
intercepts, the support vectors' (standardised) rows, standardisation and trace scales. Only
what prediction needs is kept.

Format versions (a file is written with the lowest version that holds it, so older readers
keep reading what they can):

1. ``MKLClassifier`` with a sum of kernels built from X;
2. adds product-kernel classifiers (``combination="product"`` on X: block layout, base width
   and standardisation instead of kernel specs);
3. adds ``MKLRegressor``, ``OneClassMKL``, multi-view models (view names and widths), and
   Pipelines of whitelisted scikit-learn scalers ending in an mklearn estimator; also records
   the sizes every array must have (``n_support``, ``n_block_pairs``), kernel groups and
   ``feature_names_in_``;
4. adds what refitting or ``predict_proba`` needs beyond prediction: a ``class_weight`` dict
   (as ``[class, weight]`` pairs, so that any label type survives JSON), a regulariser given
   as a built-in instance (:data:`REGULARIZER_PARAMS`: class name and constructor
   parameters; other instances are refused at save time, since loading them would mean
   running code named by the file), and Platt's ``probA_`` and ``probB_``;
5. adds models on low-rank kernels (``kernel_approximation``): the maps' groups (kernels,
   columns, route) in the header, the landmark points, landmark indices, projections and
   random phases, and ``coef_``; no support vectors.

The loader trusts nothing: it reads only the members the model needs, checks every ``.npy``
header and zip-directory size against the shapes the JSON header declares before reading
(:mod:`mklearn.persistence.model_file`), refuses a member stored twice or one the model does
not use,
checks that the shapes agree with each other (classes and weight rows, dual coefficients and
support vectors, kernel count and weights) and that values are finite, and rebuilds
parameters through the estimators' own validation. Any inconsistency is a ``ValueError``
that names it.

Files are written to a temporary file in the target directory and renamed, so an interrupted
save never leaves a partial model; temporary files of killed writers are removed by the next
save to the same directory (:func:`atomic_write`).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import zipfile
import zlib
from collections.abc import Mapping
from contextlib import contextmanager

import numpy as np

from mklearn.estimators import MKLClassifier, MKLRegressor
from mklearn.extending import constructor_parameters
from mklearn.formulation.products import FeatureProduct, FittedProduct
from mklearn.formulation.regularizers import REGULARIZERS
from mklearn.groups import KernelGroups
from mklearn.kernels import KernelBank, kernel_from_dict
from mklearn.kernels.bank import check_feature_indices
from mklearn.kernels.low_rank import map_from_state, map_state
from mklearn.kernels.views import Views
from mklearn.one_class import OneClassMKL
from mklearn.persistence.model_file import ModelArchive
from mklearn.solvers import SOLVERS

FORMAT = "mklearn-model"
VERSION = 5  # the newest format this module reads and writes



class _RegisteredParams(Mapping):
    """Class name -> constructor parameters of the registered regularisers, read from
    :data:`~mklearn.extending.REGULARIZERS` when asked."""

    def __getitem__(self, class_name):
        part = REGULARIZERS.by_class_name(class_name)
        if part is None:
            raise KeyError(class_name)
        return constructor_parameters(part)

    def __iter__(self):
        return (part.__name__ for part in REGULARIZERS.values())

    def __len__(self):
        return len(REGULARIZERS)


#: regulariser instances a model file can rebuild, those of the registered classes: class
#: name -> constructor parameters (``regularizer=LpNorm(1.5, 2.0)`` is stored as
#: ``{"type": "LpNorm", "params": {...}}``, its :meth:`~mklearn.extending.Regularizer.saved_params`)
REGULARIZER_PARAMS = _RegisteredParams()

#: scikit-learn transformers a saved Pipeline may hold before its mklearn estimator, with the
#: fitted arrays (each ``None`` or of shape ``(n_features_in_,)``) that their transform reads.
PIPELINE_TRANSFORMERS = {
    "StandardScaler": ("mean_", "scale_", "var_"),
    "MinMaxScaler": ("min_", "scale_", "data_min_", "data_max_", "data_range_"),
    "MaxAbsScaler": ("max_abs_", "scale_"),
    "RobustScaler": ("center_", "scale_"),
    "Normalizer": (),
}


def _estimator_classes():
    return {cls.__name__: cls for cls in (MKLClassifier, MKLRegressor, OneClassMKL)}


def save_model(estimator, path) -> None:
    """Write a fitted mklearn estimator, or a Pipeline ending in one, to ``path`` (``.npz``).

    Parameters
    ----------
    estimator : MKLClassifier, MKLRegressor, OneClassMKL or sklearn.pipeline.Pipeline
        Fitted on X (a kernel family, multi-view input or a product of per-feature kernels).
        A Pipeline's steps before the last must be fitted scikit-learn transformers listed in
        :data:`PIPELINE_TRANSFORMERS`.
    path : str or path-like
        The file; no extension is added.

    Raises
    ------
    ValueError
        If the estimator is not fitted, is of another type, holds NaN or infinite values
        (which the loader refuses), was fitted on precomputed kernels,
        distances or strings (the file could not rebuild test kernels), has a regulariser
        instance outside :data:`REGULARIZER_PARAMS` (a user-defined one), or a Pipeline holds
        a step outside the whitelist.
    OSError
        If the directory is not writable; no partial file is left behind.
    """
    steps = getattr(estimator, "steps", None)
    if steps is not None:
        header, arrays = _describe_pipeline(steps)
    else:
        header, arrays = _describe(estimator)
    header["version"] = _version(header)
    _check_finite(arrays)
    arrays = {"header": np.array(json.dumps(header)), **arrays}
    with atomic_write(path, "wb") as handle:
        np.savez(handle, **arrays)


def _check_finite(arrays):
    """ValueError naming the arrays with NaN or inf, which the loader would refuse."""
    bad = [name for name, array in arrays.items()
           if array.dtype.kind == "f" and not np.all(np.isfinite(array))]
    if bad:
        raise ValueError(
            f"the model holds NaN or infinite values ({', '.join(bad)}: its fit overflowed), "
            "so a file of it would not load; rescale the data (e.g. to unit variance before "
            "the pipeline) and fit again"
        )


def _version(header):
    """The lowest format version that holds the model (see the module docstring)."""
    if "low_rank" in header:
        return 5
    if any(key in header for key in ("class_weight", "regularizer", "platt")):
        return 4
    if header["estimator"] != "MKLClassifier" or "views" in header or "pipeline" in header:
        return 3
    return 2 if header.get("combination") == "product" else 1


def _describe(model):
    """(JSON header, arrays) of one fitted mklearn estimator."""
    classes = _estimator_classes()
    if type(model).__name__ not in classes or type(model) is not classes[type(model).__name__]:
        raise ValueError(
            f"save_model stores {', '.join(classes)} or a Pipeline ending in one; got "
            f"{type(model).__name__}"
        )
    if not hasattr(model, "kernel_weights_"):
        raise ValueError("the model is not fitted; call fit before saving it")
    product = getattr(model, "product_", None)
    if isinstance(product, str):  # fitted on a stack of distances
        raise ValueError(
            "a model fitted on precomputed distances cannot be saved: the file must rebuild "
            "test kernels from data; fit with kernels='features' instead"
        )
    low_rank = getattr(model, "low_rank_", None)
    bank = getattr(model, "bank_", None)
    if product is None and bank is None:
        raise ValueError(
            "a model fitted on precomputed kernels cannot be saved: the file must "
            "rebuild test kernels from data; fit with a kernel family instead"
        )
    # ValueError first for banks that cannot be stored (strings)
    state = None if product is not None else bank.fitted_state()
    weights = np.atleast_2d(model.kernel_weights_)
    header = {
        "format": FORMAT,
        "estimator": type(model).__name__,
        "params": _params(model),
        "n_features_in": int(model.n_features_in_),
        "kernel_names": [str(name) for name in model.kernel_names_],
        # a low-rank model is coef_ on its features: no support vectors
        "n_support": 0 if low_rank is not None else int(model.dual_coef_.shape[1]),
        "fit": {
            "objective": np.atleast_1d(model.objective_).astype(float).tolist(),
            "duality_gap": np.atleast_1d(model.duality_gap_).astype(float).tolist(),
            "relative_duality_gap": np.atleast_1d(
                model.relative_duality_gap_).astype(float).tolist(),
            "n_iter": np.atleast_1d(model.n_iter_).astype(int).tolist(),
            "solver": str(model.solver_),
        },
    }
    if isinstance(getattr(model, "regularizer_", None), str):  # what regularizer="auto" chose
        header["fit"]["regularizer"] = model.regularizer_
    if hasattr(model, "lam_"):  # what lam="auto" chose
        header["fit"]["lam"] = float(model.lam_)
    if hasattr(model, "classes_"):
        header["classes"] = model.classes_.tolist()
        header["classes_dtype"] = model.classes_.dtype.kind
    if hasattr(model, "shape_fit_"):  # SVC's attributes
        header["shape_fit"] = [int(size) for size in model.shape_fit_]
    if hasattr(model, "n_support_") and low_rank is None:
        header["n_support_per_class"] = model.n_support_.astype(int).tolist()
    if hasattr(model, "offset_"):
        header["offset"] = float(model.offset_)
    if hasattr(model, "feature_names_in_"):
        header["feature_names_in"] = [str(name) for name in model.feature_names_in_]
    views = getattr(model, "views_", None)
    if views is not None:
        header["views"] = {
            "names": list(views.names),
            "n_columns": [int(c) for c in views.n_columns],
            "keyed": bool(views.keyed),
        }
    groups = getattr(model, "groups_", None)
    if groups is not None:
        header["groups"] = {"codes": groups.codes.tolist(), "names": list(groups.names)}
    arrays = {
        "kernel_weights": weights,
        "dual_coef": model.dual_coef_ if low_rank is None else model.dual_coef_[:, :0],
        "intercept": model.intercept_,
    }
    _describe_refit_parts(model, header, arrays)
    if product is not None:
        header["params"]["combination"] = "product"
        header.update(
            {
                "combination": "product",
                "gamma": float(product.gamma),
                "block_names": list(product.names),
                "n_block_pairs": int(product.features.size),
            }
        )
        arrays.update(
            {
                "support_vectors": model.support_vectors_,
                "mean": product.mean,
                "scale": product.scale,
                "block_features": product.features,
                "block_codes": product.codes,
            }
        )
        return header, arrays
    header["params"]["kernels"] = "listed"
    header.update(
        {
            "kernels": [spec.to_dict() for spec in bank.specs],
            "standardize": bool(bank.standardize),
            "normalize": bank.normalize,
            "dtype": np.dtype(bank.dtype).name,
        }
    )
    arrays.update(
        {
            "support_vectors": (state["X_fit"][model.support_] if low_rank is None
                                else state["X_fit"][:0]),
            "mean": state["mean"],
            "scale": state["scale"],
            "trace_scales": state["trace_scales"],
        }
    )
    if low_rank is not None:
        header["low_rank"], members = map_state(low_rank)
        arrays.update(members, coef=np.atleast_2d(model.coef_))
    return header, arrays


def _describe_refit_parts(model, header, arrays):
    """Store a ``class_weight`` dict, a regulariser instance and Platt's sigmoids (format 4)."""
    params = model.get_params(deep=False)
    class_weight = params.get("class_weight")
    if isinstance(class_weight, dict):
        pairs = [[_plain(label), _plain(weight)] for label, weight in class_weight.items()]
        if not all(type(label) in (int, float, str, bool) and type(weight) in (int, float)
                   for label, weight in pairs):
            raise ValueError(
                f"class_weight={class_weight!r} cannot be saved: its keys must be class labels "
                "(numbers or strings) and its values numbers"
            )
        header["class_weight"] = pairs
        header["params"].pop("class_weight", None)
    regularizer = params.get("regularizer", "")  # OneClassMKL has none
    if not isinstance(regularizer, str):
        header["regularizer"] = _regularizer_entry(regularizer)
    if hasattr(model, "probA_"):
        header["platt"] = True
        arrays["probA"] = np.asarray(model.probA_, dtype=np.float64)
        arrays["probB"] = np.asarray(model.probB_, dtype=np.float64)


def _regularizer_entry(regularizer):
    kind = type(regularizer).__name__
    if REGULARIZERS.by_class_name(kind) is not type(regularizer):
        raise ValueError(
            f"regularizer={regularizer!r} cannot be saved: a model file rebuilds only the "
            f"regularisers named by a string or instances of the registered "
            f"{', '.join(REGULARIZER_PARAMS)}, so that loading never runs code a file names; "
            "register the class (class Mine(Regularizer, name='mine'), docs/extending.md), "
            "refit with one of those, or keep the fitted object in memory"
        )
    return {"type": kind, "params": regularizer.saved_params()}


def _params(model):
    """The constructor parameters that are plain JSON (kernels and groups stored apart)."""
    params = {}
    for key, value in model.get_params(deep=False).items():
        if key == "kernels":
            continue
        if key == "groups" and not (value is None or isinstance(value, str)):
            groups = getattr(model, "groups_", None)
            value = None if groups is None else groups.codes.tolist()
        value = _plain(value)
        if _is_json(value):
            params[key] = value
    return params


def _is_json(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _describe_pipeline(steps):
    *transformers, (final_name, final) = steps
    header, arrays = _describe(final)
    described = []
    for i, (name, step) in enumerate(transformers):
        kind = type(step).__name__
        if kind not in PIPELINE_TRANSFORMERS or type(step) is not _transformer_class(kind):
            raise ValueError(
                f"pipeline step '{name}' is a {kind}; a saved Pipeline may hold only "
                f"{', '.join(PIPELINE_TRANSFORMERS)} before its mklearn estimator"
            )
        if not hasattr(step, "n_features_in_"):
            raise ValueError(f"pipeline step '{name}' is not fitted; fit the Pipeline first")
        stored = []
        for attr in PIPELINE_TRANSFORMERS[kind]:
            value = getattr(step, attr, None)
            if value is not None:
                arrays[f"step{i}.{attr}"] = np.asarray(value, dtype=np.float64)
                stored.append(attr)
        entry = {
            "name": str(name),
            "type": kind,
            "params": {k: _plain(v) for k, v in step.get_params().items()},
            "arrays": stored,
            "n_features_in": int(step.n_features_in_),
        }
        seen = getattr(step, "n_samples_seen_", None)
        if seen is not None:
            entry["n_samples_seen"] = np.asarray(seen).astype(int).tolist()
        if hasattr(step, "feature_names_in_"):
            entry["feature_names_in"] = [str(n) for n in step.feature_names_in_]
        if not _is_json(entry["params"]):
            raise ValueError(f"pipeline step '{name}' has parameters that are not plain values")
        described.append(entry)
    header["pipeline"] = described
    header["final_step"] = str(final_name)
    return header, arrays


def _transformer_class(kind):
    import sklearn.preprocessing

    return getattr(sklearn.preprocessing, kind)


_TMP_PREFIX, _TMP_SUFFIX = ".mklearn-", ".tmp"
_STALE_SECONDS = 60.0  # a temporary file this old and unlocked was left by a killed writer


@contextmanager
def atomic_write(path, mode="w"):
    """Open a temporary file beside ``path``; rename it onto ``path`` only on success.

    An interrupted or failing write leaves ``path`` as it was and no temporary file behind.
    A writer killed outright (``kill -9``, power loss) cannot clean up, so the temporary
    file (``.mklearn-*.tmp`` in the target directory) is locked while it is written, and
    every later write to that directory deletes such files that are unlocked and older than
    a minute.

    Raises
    ------
    OSError
        If the directory of ``path`` does not exist or is not writable (the message names
        ``path``).
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    check_writable(target)
    _remove_stale_temporaries(directory)
    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX, dir=directory)
    try:
        _lock(fd)  # held until fd closes: after the rename, or when the process dies
        with os.fdopen(fd, mode, closefd=False) as handle:
            yield handle
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        os.close(fd)


def check_writable(path) -> None:
    """OSError naming ``path`` unless a file can be written there (checked before any work).

    The directory is tried by creating (and removing) an empty temporary file there, as
    the write will: permission bits say nothing of ``/proc`` or a read-only mount, nor of
    root's rights.

    Raises
    ------
    OSError
        If ``path`` is a directory or another non-regular file (a device, a pipe: the write
        renames a new file onto ``path``), or its directory is missing or not writable.
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    if os.path.isdir(target):
        raise IsADirectoryError(f"cannot write to {target}: it is a directory; give a file name")
    if os.path.exists(target) and not os.path.isfile(target):
        raise OSError(f"cannot write {target}: it is not a regular file (a device or a pipe); "
                      "give a file name")
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"cannot write {target}: directory {directory} does not exist; create it first"
        )
    try:
        fd, probe = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX, dir=directory)
    except OSError as exc:
        raise PermissionError(f"cannot write {target}: files cannot be created in {directory} "
                              f"({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def _lock(fd) -> bool:
    """Take an exclusive advisory lock on ``fd`` without waiting; False if another has it."""
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): staleness is judged by age alone
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _remove_stale_temporaries(directory) -> None:
    """Delete ``.mklearn-*.tmp`` files in ``directory`` left by killed writers."""
    now = time.time()
    try:
        names = [n for n in os.listdir(directory)
                 if n.startswith(_TMP_PREFIX) and n.endswith(_TMP_SUFFIX)]
    except OSError:
        return
    for name in names:
        stale = os.path.join(directory, name)
        try:
            if now - os.stat(stale).st_mtime < _STALE_SECONDS:
                continue
            fd = os.open(stale, os.O_RDONLY)
        except OSError:
            continue
        try:
            if _lock(fd):  # no live writer holds it
                os.unlink(stale)
        except OSError:
            pass
        finally:
            os.close(fd)


def _plain(value):
    """numpy scalars as Python numbers, so that the header is plain JSON."""
    return value.item() if isinstance(value, np.generic) else value


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask



# ------------------------------------------------------------------------------- loading
_READ_ERRORS = (  # once the file is open, an OSError (a seek before its start) is its content's
    zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, KeyError,
    TypeError, IndexError, ValueError, UnicodeDecodeError, OverflowError, OSError,
)


def load_model(path):
    """Read a model written by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    MKLClassifier, MKLRegressor, OneClassMKL or sklearn.pipeline.Pipeline
        Fitted; its predictions equal those of the saved model.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the file is not an mklearn model, its format version is not between 1 and
        :data:`VERSION`, or it is damaged or edited: a member stored twice, missing, not part
        of the model (an unexpected member), or of another dtype,
        shape or size than the header declares, shapes that disagree with each other,
        non-finite values, or invalid parameters. The message names the problem.
    """
    path = os.fspath(path)
    try:
        archive = ModelArchive(path)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        raise ValueError(
            f"{path} is not an mklearn model file (it does not read as an .npz archive with a "
            "JSON header); write one with `mklearn fit --save MODEL` or save_model"
        ) from exc
    with archive:
        try:
            archive.check_unique()  # else the zip directory would serve the last copy
        except ValueError as exc:
            raise _damaged(path, exc) from exc
        header = _read_header(archive, path)
        try:
            model = _Reader(header, archive).model()
            archive.check_all_read()
        except _READ_ERRORS as exc:
            raise _damaged(path, exc) from exc
    return model


def _damaged(path, exc):
    return ValueError(f"{path} is a damaged mklearn model file: {exc}; save the model again")


def _read_header(archive, path):
    try:
        header = json.loads(archive.header_text())
    except _READ_ERRORS as exc:
        raise ValueError(
            f"{path} is not an mklearn model file (no readable JSON header: {exc})"
        ) from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path} is not an mklearn model file (no '{FORMAT}' header)")
    version = header.get("version")
    if type(version) is not int or version < 1:
        raise ValueError(
            f"{path} has no valid model format version ({version!r}; valid: 1 to {VERSION}); "
            "the file is damaged"
        )
    if version > VERSION:
        raise ValueError(
            f"{path} has model format version {version}; this mklearn "
            f"reads up to version {VERSION}: upgrade mklearn"
        )
    return header


def _check(condition, message):
    if not condition:
        raise ValueError(message)


def _integer(value, name, low):
    _check(type(value) is int and value >= low, f"'{name}' must be an integer >= {low}, "
           f"got {value!r}")
    return value


def _strings(value, name, length=None):
    _check(isinstance(value, list) and all(isinstance(v, str) for v in value),
           f"'{name}' must be a list of strings")
    if length is not None:
        _check(len(value) == length, f"'{name}' has {len(value)} entries, expected {length}")
    return value


def _numbers(value, name, length, integral=False):
    kinds = (int,) if integral else (int, float)
    _check(isinstance(value, list) and len(value) == length
           and all(type(v) in kinds for v in value),
           f"'{name}' must be a list of {length} {'integers' if integral else 'numbers'}")
    return value


class _Reader:
    """Rebuilds the model a checked header describes, reading each member once."""

    def __init__(self, header, archive):
        self.header = header
        self.archive = archive
        self.version = header["version"]

    def model(self):
        header = self.header
        model = self._estimator()
        if "pipeline" not in header:
            return model
        _check(self.version >= 3, "a Pipeline needs format version 3")
        return self._pipeline(model)

    # ------------------------------------------------------------------ estimator
    def _estimator(self):
        header, archive = self.header, self.archive
        classes = _estimator_classes()
        kind = header["estimator"]
        _check(kind in classes, f"unknown estimator {kind!r}; expected one of {sorted(classes)}")
        _check(kind == "MKLClassifier" or self.version >= 3,
               f"{kind} models need format version 3, the file says {self.version}")
        n_features = _integer(header["n_features_in"], "n_features_in", 1)
        names = _strings(header["kernel_names"], "kernel_names")
        n_kernels = len(names)
        _check(n_kernels >= 1, "the model has no kernels")
        classifier = kind == "MKLClassifier"
        if classifier:
            labels = self._classes()
            n_rows = 1 if labels.size == 2 else labels.size
        else:
            n_rows = 1
        if "n_support" in header:
            n_sv = _integer(header["n_support"], "n_support", 0)
        else:  # format 1 and 2 files: the dual coefficients' own header gives it
            _check(self.version < 3, "'n_support' is missing")
            n_sv = archive.shape_of("dual_coef", 2)[1]
        weights = archive.read("kernel_weights", shape=(n_rows, n_kernels))
        _check(np.all(weights >= 0), "kernel weights must be >= 0")
        dual_coef = archive.read("dual_coef", shape=(n_rows, n_sv))
        intercept = archive.read("intercept", shape=(n_rows,))
        support_vectors = archive.read("support_vectors", shape=(n_sv, n_features))
        mean = archive.read("mean", shape=(n_features,))
        scale = archive.read("scale", shape=(n_features,))
        _check(np.all(scale > 0), "standardisation scales must be > 0")

        params = header["params"]
        _check(isinstance(params, dict), "'params' must be a dict")
        params = {k: v for k, v in params.items() if k not in ("kernels", "combination")}
        if classifier and "class_weight" in header:
            params["class_weight"] = self._class_weight(labels)
        if "regularizer" in header:
            params["regularizer"] = self._regularizer(n_kernels)
        cls = classes[kind]
        if header.get("combination") == "product":
            _check(classifier and self.version >= 2, "product models are MKLClassifier, v2+")
            model = self._product(cls, params, n_features, n_kernels, mean, scale)
            model.support_vectors_ = support_vectors
        else:
            model = self._sum(cls, params, n_features, n_kernels, mean, scale, support_vectors)
        model._validate_params()  # InvalidParameterError is a ValueError

        model.kernel_weights_ = weights[0] if n_rows == 1 else weights
        if hasattr(model, "coef_"):
            _check(model.coef_.shape[0] == n_rows, "'coef' must have a row per weight row")
        model.dual_coef_ = dual_coef
        model.intercept_ = intercept
        model.support_ = np.arange(n_sv)  # rows of the stored support vectors
        model.n_train_ = n_sv
        model.n_features_in_ = n_features
        model.kernel_names_ = names
        if classifier:
            model.classes_ = labels
        self._svc_attributes(model, n_sv, n_features)
        fit = header["fit"]
        _check(isinstance(fit, dict), "'fit' must be a dict")
        objective = _numbers(fit["objective"], "fit.objective", n_rows)
        gap = _numbers(fit["duality_gap"], "fit.duality_gap", n_rows)
        n_iter = _numbers(fit["n_iter"], "fit.n_iter", n_rows, integral=True)
        if n_rows == 1:
            model.objective_, model.duality_gap_, model.n_iter_ = objective[0], gap[0], n_iter[0]
        else:
            model.objective_, model.duality_gap_ = np.array(objective), np.array(gap)
            model.n_iter_ = np.array(n_iter)
        if "relative_duality_gap" in fit:  # absent from files written before it existed
            relative = _numbers(fit["relative_duality_gap"], "fit.relative_duality_gap", n_rows)
            model.relative_duality_gap_ = relative[0] if n_rows == 1 else np.array(relative)
        solver = fit.get("solver", model.solver)
        _check(solver in SOLVERS or solver == "auto", "'fit.solver' must name a solver")
        model.solver_ = solver
        if "regularizer" in fit:
            _check(fit["regularizer"] in REGULARIZERS, "'fit.regularizer' must name a regularizer")
            model.regularizer_ = fit["regularizer"]
        if "lam" in fit:  # absent from files written before lam="auto"
            lam = fit["lam"]
            _check(type(lam) in (int, float) and np.isfinite(lam) and lam > 0,
                   "'fit.lam' must be a positive number")
            model.lam_ = float(lam)
        if kind == "OneClassMKL":
            offset = header["offset"]
            _check(type(offset) in (int, float) and np.isfinite(offset),
                   "'offset' must be a finite number")
            model.offset_ = float(offset)
        if "feature_names_in" in header:
            model.feature_names_in_ = np.array(
                _strings(header["feature_names_in"], "feature_names_in", n_features), dtype=object
            )
        if classifier:
            self._groups(model, n_kernels)
            self._platt(model, n_rows)
        return model

    def _class_weight(self, labels):
        """The ``class_weight`` dict from its ``[class, weight]`` pairs (format 4)."""
        pairs = self.header["class_weight"]
        _check(self.version >= 4, "'class_weight' pairs need format version 4")
        _check(isinstance(pairs, list) and all(
            isinstance(pair, list) and len(pair) == 2
            and type(pair[0]) in (int, float, str, bool) and type(pair[1]) in (int, float)
            and np.isfinite(pair[1]) for pair in pairs),
            "'class_weight' must be a list of [class, finite weight] pairs")
        known = labels.tolist()
        weights = {}
        for label, weight in pairs:
            _check(label in known, f"'class_weight' names class {label!r}, which the model "
                   "does not have")
            weights[known[known.index(label)]] = float(weight)
        _check(len(weights) == len(pairs), "'class_weight' names a class twice")
        return weights

    def _regularizer(self, n_kernels):
        """A registered regulariser's instance from its class name and parameters (format
        4), rebuilt by its ``from_saved``, which checks them."""
        entry = self.header["regularizer"]
        _check(self.version >= 4, "a stored regulariser needs format version 4")
        _check(isinstance(entry, dict) and isinstance(entry.get("type"), str)
               and entry["type"] in REGULARIZER_PARAMS
               and isinstance(entry.get("params"), dict)
               and set(entry["params"]) == set(REGULARIZER_PARAMS[entry["type"]]),
               f"'regularizer' must be one of {sorted(REGULARIZER_PARAMS)} with its parameters")
        part = REGULARIZERS.by_class_name(entry["type"])
        return part.from_saved(dict(entry["params"]), n_kernels)

    def _platt(self, model, n_rows):
        """Platt's ``probA_`` and ``probB_`` (format 4), which ``predict_proba`` reads."""
        platt = self.header.get("platt", False)
        _check(type(platt) is bool, "'platt' must be true or false")
        if not platt:
            return
        _check(self.version >= 4 and model.probability,
               "Platt's sigmoids need format version 4 and probability=True")
        model.probA_ = self.archive.read("probA", shape=(n_rows,))
        model.probB_ = self.archive.read("probB", shape=(n_rows,))

    def _classes(self):
        header = self.header
        labels = header["classes"]
        _check(isinstance(labels, list) and len(labels) >= 2
               and all(type(c) in (int, float, str, bool) for c in labels),
               "'classes' must be a list of at least two labels (numbers or strings)")
        kind = header["classes_dtype"]
        _check(kind in ("b", "i", "u", "f", "U", "O"), f"unknown classes_dtype {kind!r}")
        labels = np.array(labels, dtype=object if kind == "O" else None)
        _check(labels.dtype.kind == {"u": "i"}.get(kind, kind),
               f"'classes' do not all have the declared type {kind!r}")
        if labels.dtype.kind == "f":
            _check(np.all(np.isfinite(labels)), "'classes' holds NaN or infinity")
        _check(len(set(labels.tolist())) == labels.size, "'classes' has repeated labels")
        return labels

    def _svc_attributes(self, model, n_sv, n_features):
        """SVC's ``shape_fit_``, ``n_support_`` (per class, of the stored support) and, for
        a sum of kernels, ``support_vectors_``, where the file has them."""
        header = self.header
        if "shape_fit" in header:
            shape = header["shape_fit"]
            _check(isinstance(shape, list) and all(type(v) is int and v >= 0 for v in shape),
                   "'shape_fit' must be a list of integers >= 0")
            model.shape_fit_ = tuple(shape)
        classes = getattr(model, "classes_", None)
        counts = None if classes is None else header.get(
            "n_support_per_class", [0] * classes.size if n_sv == 0 else None)
        if counts is not None:  # files written before it existed have none
            _numbers(counts, "n_support_per_class", model.classes_.size, integral=True)
            _check(sum(counts) == n_sv, "'n_support_per_class' must sum to 'n_support'")
            model.n_support_ = np.asarray(counts, dtype=np.int32)
        if header.get("combination") != "product":
            model.support_vectors_ = (np.empty((0, n_features)) if "low_rank" in header
                                      else model.bank_.X_fit_)

    def _sum(self, cls, params, n_features, n_kernels, mean, scale, support_vectors):
        header, archive = self.header, self.archive
        specs = header["kernels"]
        _check(isinstance(specs, list) and len(specs) == n_kernels,
               f"'kernels' must list {n_kernels} kernel specs, one per kernel name")
        specs = [kernel_from_dict(d) for d in specs]
        check_feature_indices(specs, n_features)
        _check(type(header["standardize"]) is bool, "'standardize' must be true or false")
        _check(header["dtype"] in ("float64", "float32"), "'dtype' must be float64 or float32")
        trace_scales = archive.read("trace_scales", shape=(n_kernels,))
        _check(np.all(trace_scales > 0), "trace scales must be > 0")
        model = cls(**params, kernels=specs)
        low_rank = header.get("low_rank")
        if low_rank is not None:
            _check(self.version >= 5 and isinstance(low_rank, dict),
                   "low-rank models need format version 5")
            shape = (archive.shape_of("landmark_points", 2)[0], n_features)
            support_vectors = archive.read("landmark_points", shape=shape)
        model.bank_ = KernelBank.from_fitted(
            specs,
            standardize=header["standardize"],
            normalize=header["normalize"],
            dtype=np.dtype(header["dtype"]),
            mean=mean,
            scale=scale,
            trace_scales=trace_scales,
            X_fit=support_vectors,
        )
        model.views_ = self._views(n_features)
        if low_rank is not None:
            self._low_rank(model, low_rank)
        return model

    def _low_rank(self, model, description):
        """The low-rank map and ``coef_`` of a format 5 file."""
        def read(name, shape, kinds):
            return self.archive.read(name, shape=shape, kinds=kinds)

        model.low_rank_ = map_from_state(model.bank_, description, read)
        model.kernel_approximation_ = model.low_rank_.approximation
        model.kernel_storage_ = "features"
        n_rows = self.archive.shape_of("coef", 2)[0]
        model.coef_ = read("coef", (n_rows, model.low_rank_.rank), "f")

    def _views(self, n_features):
        views = self.header.get("views")
        if views is None:
            return None
        _check(self.version >= 3 and isinstance(views, dict), "'views' needs format version 3")
        names = _strings(views["names"], "views.names")
        _check(len(names) >= 1 and len(set(names)) == len(names), "view names must be unique")
        widths = _numbers(views["n_columns"], "views.n_columns", len(names), integral=True)
        _check(all(w >= 1 for w in widths) and sum(widths) == n_features,
               f"view widths {widths} do not add up to n_features_in = {n_features}")
        _check(type(views["keyed"]) is bool, "'views.keyed' must be true or false")
        return Views(names, widths, views["keyed"])

    def _product(self, cls, params, n_features, n_kernels, mean, scale):
        header, archive = self.header, self.archive
        gamma = header["gamma"]
        _check(type(gamma) in (int, float) and np.isfinite(gamma) and gamma > 0,
               "'gamma' must be a finite number > 0")
        block_names = _strings(header["block_names"], "block_names", n_kernels)
        if "n_block_pairs" in header:
            n_pairs = _integer(header["n_block_pairs"], "n_block_pairs", 1)
        else:
            _check(self.version < 3, "'n_block_pairs' is missing")
            n_pairs = archive.shape_of("block_features", 1)[0]
        features = archive.read("block_features", shape=(n_pairs,), kinds="iu").astype(np.int64)
        codes = archive.read("block_codes", shape=(n_pairs,), kinds="iu").astype(np.int64)
        _check(np.all((features >= 0) & (features < n_features)),
               f"block features must be column indices below {n_features}")
        _check(np.all((codes >= 0) & (codes < n_kernels))
               and np.unique(codes).size == n_kernels,
               f"block codes must cover the {n_kernels} kernels")
        model = cls(**params, kernels=FeatureProduct(gamma=float(gamma)))
        model.bank_ = None
        model.views_ = None
        model.product_ = FittedProduct(mean, scale, features, codes, float(gamma), block_names)
        return model

    def _groups(self, model, n_kernels):
        groups = self.header.get("groups")
        model.groups_ = None
        if groups is None:
            return
        _check(isinstance(groups, dict), "'groups' must be a dict")
        names = _strings(groups["names"], "groups.names")
        codes = _numbers(groups["codes"], "groups.codes", n_kernels, integral=True)
        codes = np.array(codes, dtype=np.int64)
        _check(np.all((codes >= 0) & (codes < len(names)))
               and np.unique(codes).size == len(names),
               f"group codes must cover the {len(names)} groups")
        model.groups_ = KernelGroups(codes, names)
        model.group_names_ = list(names)
        weights = np.atleast_2d(model.kernel_weights_)
        sums = np.array([model.groups_.sum(w) for w in weights])
        shares = sums / np.maximum(sums.sum(axis=1, keepdims=True), 1e-300)
        model.group_weights_ = shares[0] if weights.shape[0] == 1 else shares

    # ------------------------------------------------------------------- pipeline
    def _pipeline(self, model):
        from sklearn.pipeline import Pipeline

        header, archive = self.header, self.archive
        entries = header["pipeline"]
        _check(isinstance(entries, list), "'pipeline' must be a list of steps")
        final = header["final_step"]
        steps = []
        for i, entry in enumerate(entries):
            _check(isinstance(entry, dict), "every pipeline step must be a dict")
            kind, name = entry["type"], entry["name"]
            _check(kind in PIPELINE_TRANSFORMERS,
                   f"pipeline step type {kind!r} is not one of {sorted(PIPELINE_TRANSFORMERS)}")
            params = entry["params"]
            _check(isinstance(params, dict), "pipeline step params must be a dict")
            params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
            step = _transformer_class(kind)(**params)
            step._validate_params()
            _check(_integer(entry["n_features_in"], "n_features_in", 1) == model.n_features_in_,
                   "pipeline steps must keep the model's number of features")
            width = model.n_features_in_
            stored = _strings(entry["arrays"], "arrays")
            _check(set(stored) <= set(PIPELINE_TRANSFORMERS[kind]),
                   f"unknown arrays {stored} for a {kind}")
            for attr in PIPELINE_TRANSFORMERS[kind]:
                value = archive.read(f"step{i}.{attr}", shape=(width,)) if attr in stored else None
                setattr(step, attr, value)
            step.n_features_in_ = width
            if "n_samples_seen" in entry:
                seen = entry["n_samples_seen"]
                if isinstance(seen, list):
                    seen = np.array(_numbers(seen, "n_samples_seen", width, integral=True))
                else:
                    seen = _integer(seen, "n_samples_seen", 0)
                step.n_samples_seen_ = seen
            if "feature_names_in" in entry:
                step.feature_names_in_ = np.array(
                    _strings(entry["feature_names_in"], "feature_names_in", width), dtype=object
                )
            steps.append((name, step))
        names = [name for name, _ in steps] + [final]
        _check(all(isinstance(n, str) and n and "__" not in n for n in names)
               and len(set(names)) == len(names), "pipeline step names must be unique strings")
        return Pipeline([*steps, (final, model)])
