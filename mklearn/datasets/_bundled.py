"""Loaders for the benchmark data sets shipped with mklearn.

Provenance, checksums and citations of every file are in ``mklearn/datasets/SOURCES.md``.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from importlib import resources

import numpy as np

from ._readers import load_svmlight
from ._resources import bundled_file, read_bundled_rows


def _encode_binary(labels: Sequence[str], positive: str, negative: str) -> np.ndarray:
    """Map the two original class names to +1 / -1 (int64)."""
    unexpected = set(labels) - {positive, negative}
    if unexpected:
        raise ValueError(f"unexpected class labels {sorted(unexpected)} in bundled data")
    return np.where(np.asarray(labels) == positive, 1, -1).astype(np.int64)


def _binary_table(
    dirname: str,
    filename: str,
    *,
    label_column: int,
    positive: str,
    negative: str,
    drop_columns: Sequence[int] = (),
    delimiter: str | None = ",",
    drop_incomplete: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Load a bundled numeric table with one class column as (X float64, y in {-1, +1})."""
    rows = read_bundled_rows(dirname, filename, delimiter)
    if drop_incomplete:
        rows = [row for row in rows if "?" not in row]
    n_columns = len(rows[0])
    label_index = label_column % n_columns
    skipped = {label_index, *(column % n_columns for column in drop_columns)}
    feature_columns = [column for column in range(n_columns) if column not in skipped]
    X = np.asarray([[row[c] for c in feature_columns] for row in rows], dtype=np.float64)
    y = _encode_binary([row[label_index] for row in rows], positive, negative)
    return X, y


def load_sonar() -> tuple[np.ndarray, np.ndarray]:
    """Load the Sonar (Mines vs. Rocks) data set.

    Sonar returns bounced off a metal cylinder (mine) or a rock; each feature
    is the energy in one frequency band, scaled to [0, 1].

    Returns
    -------
    X : ndarray of shape (208, 60), dtype float64
        The 60 band energies.
    y : ndarray of shape (208,), dtype int64
        +1 for ``M`` (mine, 111 samples), -1 for ``R`` (rock, 97 samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    Source: UCI Machine Learning Repository, "Connectionist Bench (Sonar, Mines
    vs. Rocks)", file ``sonar.all-data``. No missing values.

    Citation: R. P. Gorman and T. J. Sejnowski (1988), "Analysis of hidden units
    in a layered network trained to classify sonar targets", Neural Networks
    1:75-89.
    """
    return _binary_table("sonar", "sonar.all-data", label_column=-1, positive="M", negative="R")


def load_ionosphere() -> tuple[np.ndarray, np.ndarray]:
    """Load the Johns Hopkins University Ionosphere radar data set.

    Returns
    -------
    X : ndarray of shape (351, 34), dtype float64
        The 34 radar-return attributes. All columns are kept, including column
        index 1 (the second attribute), which is constant zero in this data;
        drop or ignore it if your method needs non-degenerate features.
    y : ndarray of shape (351,), dtype int64
        +1 for ``g`` (good return, 225 samples), -1 for ``b`` (bad, 126 samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    Source: UCI Machine Learning Repository, "Ionosphere", file
    ``ionosphere.data``. No missing values.

    Citation: V. G. Sigillito, S. P. Wing, L. V. Hutton, K. B. Baker (1989),
    "Classification of radar returns from the ionosphere using neural
    networks", Johns Hopkins APL Technical Digest 10:262-266.
    """
    return _binary_table(
        "ionosphere", "ionosphere.data", label_column=-1, positive="g", negative="b"
    )


def load_liver_disorders() -> tuple[np.ndarray, np.ndarray]:
    """Load the BUPA Liver Disorders data set with the ``selector`` column as class.

    Returns
    -------
    X : ndarray of shape (345, 6), dtype float64
        Columns mcv, alkphos, sgpt, sgot, gammagt, drinks (blood tests and
        number of half-pint drinks per day).
    y : ndarray of shape (345,), dtype int64
        Column 7 (``selector``): +1 for selector 2 (200 samples), -1 for
        selector 1 (145 samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    The class is column 7, as in the SVM / MKL literature that reports results
    on "liver". McDermott & Forsyth (2016) showed that this column is only the
    train/test split selector used by the donors, not a diagnosis; they suggest
    dichotomising ``drinks`` instead. Results on this task therefore measure
    comparability with published numbers, not medical relevance.

    Source: UCI Machine Learning Repository, "Liver Disorders", file
    ``bupa.data`` (BUPA Medical Research Ltd.; donor R. S. Forsyth, 1990). No
    missing values.

    Citation: J. McDermott and R. S. Forsyth (2016), "Diagnosing a disorder in a
    classification benchmark", Pattern Recognition Letters 73:41-43.
    """
    return _binary_table(
        "liver-disorders", "bupa.data", label_column=-1, positive="2", negative="1"
    )


def load_australian() -> tuple[np.ndarray, np.ndarray]:
    """Load the Statlog Australian Credit Approval data set.

    Returns
    -------
    X : ndarray of shape (690, 14), dtype float64
        Attributes A1-A14 as stored by Statlog (names and values anonymised).
        A1, A4, A5, A6, A8, A9, A10 and A12 are integer-coded categoricals;
        they are returned as numbers, not one-hot encoded.
    y : ndarray of shape (690,), dtype int64
        +1 for class 1 (307 samples), -1 for class 0 (383 samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    Source: UCI Machine Learning Repository, "Statlog (Australian Credit
    Approval)", file ``australian.dat`` (from J. R. Quinlan's credit data). The
    Statlog version has no missing values (they were replaced by the donors).

    Citation: D. Michie, D. J. Spiegelhalter, C. C. Taylor (eds.) (1994),
    *Machine Learning, Neural and Statistical Classification*, Ellis Horwood;
    J. R. Quinlan (1987), "Simplifying decision trees", Int. J. Man-Machine
    Studies 27:221-234.
    """
    return _binary_table(
        "statlog-australian",
        "australian.dat",
        label_column=-1,
        positive="1",
        negative="0",
        delimiter=None,
    )


def load_breast_cancer() -> tuple[np.ndarray, np.ndarray]:
    """Load the original Breast Cancer Wisconsin data set (683 complete rows).

    This is the 9-attribute cytology data (Wolberg & Mangasarian 1990), not the
    30-feature diagnostic set that :func:`sklearn.datasets.load_breast_cancer`
    returns (that one is :func:`load_wdbc`).

    Returns
    -------
    X : ndarray of shape (683, 9), dtype float64
        Clump thickness, uniformity of cell size, uniformity of cell shape,
        marginal adhesion, single epithelial cell size, bare nuclei, bland
        chromatin, normal nucleoli, mitoses; integers 1-10.
    y : ndarray of shape (683,), dtype int64
        +1 for class 4 (malignant, 239 samples), -1 for class 2 (benign, 444
        samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    The sample-ID column is dropped, and so are the 16 of 699 rows whose bare
    nuclei value is ``?`` (2 malignant, 14 benign), as in the papers that use
    683 rows.

    Source: UCI Machine Learning Repository, "Breast Cancer Wisconsin
    (Original)", file ``breast-cancer-wisconsin.data``.

    Citation: W. H. Wolberg and O. L. Mangasarian (1990), "Multisurface method
    of pattern separation for medical diagnosis applied to breast cytology",
    PNAS 87:9193-9196.
    """
    return _binary_table(
        "breast-cancer-wisconsin",
        "breast-cancer-wisconsin.data",
        label_column=-1,
        positive="4",
        negative="2",
        drop_columns=(0,),
        drop_incomplete=True,
    )


def load_pima() -> tuple[np.ndarray, np.ndarray]:
    """Load the Pima Indians Diabetes data set.

    Not to be confused with the regression set of
    :func:`sklearn.datasets.load_diabetes`; ``load_diabetes`` in this module
    is an alias of this function.

    Returns
    -------
    X : ndarray of shape (768, 8), dtype float64
        Pregnancies, plasma glucose, diastolic blood pressure, triceps skin
        fold thickness, 2-hour serum insulin, BMI, diabetes pedigree function,
        age.
    y : ndarray of shape (768,), dtype int64
        +1 for class 1 (tested positive for diabetes, 268 samples), -1 for
        class 0 (negative, 500 samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    Zeros in glucose, blood pressure, skin thickness, insulin and BMI stand for
    missing measurements. They are kept as zeros, as in the SVM / MKL papers
    that use this set; impute them yourself if your experiment needs it.

    Source: UCI Machine Learning Repository (former), "Pima Indians Diabetes",
    file ``pima-indians-diabetes.data`` (National Institute of Diabetes and
    Digestive and Kidney Diseases).

    Citation: J. W. Smith, J. E. Everhart, W. C. Dickson, W. C. Knowler,
    R. S. Johannes (1988), "Using the ADAP learning algorithm to forecast the
    onset of diabetes mellitus", Proc. Symp. Computer Applications in Medical
    Care, 261-265.
    """
    return _binary_table(
        "pima-indians-diabetes",
        "pima-indians-diabetes.data",
        label_column=-1,
        positive="1",
        negative="0",
    )


load_diabetes = load_pima


def load_wpbc() -> tuple[np.ndarray, np.ndarray]:
    """Load the Wisconsin Prognostic Breast Cancer (WPBC) data set.

    Returns
    -------
    X : ndarray of shape (194, 33), dtype float64
        The 33 numeric columns after ID and outcome, in file order: time
        (recurrence or disease-free time, months), the 30 nucleus features
        (mean, standard error and worst of 10 measurements), tumour size and
        lymph-node status.
    y : ndarray of shape (194,), dtype int64
        +1 for outcome ``R`` (recurrent, 46 samples), -1 for ``N``
        (non-recurrent, 148 samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    The ID column is dropped, and so are the 4 of 198 rows whose lymph-node
    status is ``?`` (1 recurrent, 3 non-recurrent). The ``time`` column is kept
    as a feature; note that it is a follow-up time, which partly reveals the
    outcome.

    Source: UCI Machine Learning Repository, "Breast Cancer Wisconsin
    (Prognostic)", file ``wpbc.data``.

    Citation: W. N. Street, O. L. Mangasarian, W. H. Wolberg (1995), "An
    inductive learning approach to prognostic prediction", Proc. ICML-95,
    522-530.
    """
    return _binary_table(
        "wpbc",
        "wpbc.data",
        label_column=1,
        positive="R",
        negative="N",
        drop_columns=(0,),
        drop_incomplete=True,
    )


def load_heart() -> tuple[np.ndarray, np.ndarray]:
    """Load the Statlog Heart disease data set.

    Returns
    -------
    X : ndarray of shape (270, 13), dtype float64
        Age, sex, chest-pain type, resting blood pressure, serum cholesterol,
        fasting blood sugar > 120 mg/dl, resting ECG, maximum heart rate,
        exercise-induced angina, oldpeak, slope of peak ST segment, number of
        major vessels, thal. Categoricals are integer-coded.
    y : ndarray of shape (270,), dtype int64
        +1 for class 2 (heart disease present, 120 samples), -1 for class 1
        (absent, 150 samples). This matches the LIBSVM ``heart_scale`` labels.

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    Source: UCI Machine Learning Repository, "Statlog (Heart)", file
    ``heart.dat`` (derived from the Cleveland heart-disease data). No missing
    values.

    Citation: D. Michie, D. J. Spiegelhalter, C. C. Taylor (eds.) (1994),
    *Machine Learning, Neural and Statistical Classification*, Ellis Horwood;
    R. Detrano et al. (1989), Am. J. Cardiology 64:304-310.
    """
    return _binary_table(
        "statlog-heart",
        "heart.dat",
        label_column=-1,
        positive="2",
        negative="1",
        delimiter=None,
    )


_VOTE_CODES = {"y": 1.0, "n": -1.0, "?": 0.0}


def load_house_votes() -> tuple[np.ndarray, np.ndarray]:
    """Load the 1984 Congressional Voting Records data set.

    Returns
    -------
    X : ndarray of shape (435, 16), dtype float64
        The 16 key votes of each member of the U.S. House of Representatives:
        +1.0 for ``y`` (yea), -1.0 for ``n`` (nay), 0.0 for ``?`` (did not
        vote or position unknown).
    y : ndarray of shape (435,), dtype int64
        +1 for ``republican`` (168 samples), -1 for ``democrat`` (267 samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    ``?`` is a real answer category here ("not yea or nay"), not a missing file
    value, so no row is dropped (203 rows contain at least one ``?``).

    Source: UCI Machine Learning Repository, "Congressional Voting Records",
    file ``house-votes-84.data`` (Congressional Quarterly Almanac, 98th
    Congress, 2nd session, 1984).

    Citation: J. C. Schlimmer (1987), *Concept acquisition through
    representational adjustment*, PhD thesis, University of California, Irvine.
    """
    rows = read_bundled_rows("house-votes-84", "house-votes-84.data", ",")
    X = np.asarray([[_VOTE_CODES[vote] for vote in row[1:]] for row in rows], dtype=np.float64)
    y = _encode_binary([row[0] for row in rows], positive="republican", negative="democrat")
    return X, y


def load_wdbc() -> tuple[np.ndarray, np.ndarray]:
    """Load the Wisconsin Diagnostic Breast Cancer (WDBC) data set.

    Same data as :func:`sklearn.datasets.load_breast_cancer`, but with
    labels +1 = malignant (sklearn codes malignant as 0).

    Returns
    -------
    X : ndarray of shape (569, 30), dtype float64
        Mean, standard error and worst value of 10 cell-nucleus measurements
        (radius, texture, perimeter, area, smoothness, compactness, concavity,
        concave points, symmetry, fractal dimension).
    y : ndarray of shape (569,), dtype int64
        +1 for ``M`` (malignant, 212 samples), -1 for ``B`` (benign, 357
        samples).

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    The ID column is dropped. No missing values.

    Source: UCI Machine Learning Repository, "Breast Cancer Wisconsin
    (Diagnostic)", file ``wdbc.data``.

    Citation: W. N. Street, W. H. Wolberg, O. L. Mangasarian (1993), "Nuclear
    feature extraction for breast tumor diagnosis", IS&T/SPIE Symp. Electronic
    Imaging 1905:861-870.
    """
    return _binary_table(
        "wdbc", "wdbc.data", label_column=1, positive="M", negative="B", drop_columns=(0,)
    )


def load_abalone() -> tuple[np.ndarray, np.ndarray]:
    """Load the Abalone regression data set (LIBSVM ``abalone_scale``).

    Returns
    -------
    X : ndarray of shape (4177, 8), dtype float64
        Dense features scaled to [-1, 1] by LIBSVM: coded sex, length,
        diameter, height, whole weight, shucked weight, viscera weight, shell
        weight.
    y : ndarray of shape (4177,), dtype float64
        Regression target: number of shell rings (age is about rings + 1.5
        years); 28 distinct integer values from 1 to 29.

    Raises
    ------
    FileNotFoundError
        If the bundled data file is missing (broken installation).

    Notes
    -----
    Source: LIBSVM regression data page (``abalone_scale``), from the UCI
    "Abalone" data set. No missing values.

    Citation: W. J. Nash, T. L. Sellers, S. R. Talbot, A. J. Cawthorn,
    W. B. Ford (1994), "The Population Biology of Abalone (Haliotis species) in
    Tasmania. I. Blacklip Abalone (H. rubra) from the North Coast and Islands
    of Bass Strait", Sea Fisheries Division, Technical Report No. 48;
    C.-C. Chang and C.-J. Lin (2011), "LIBSVM: a library for support vector
    machines", ACM TIST 2(3):27.
    """
    resource = bundled_file("abalone_scale", "abalone_scale")
    with resources.as_file(resource) as path:
        X, y = load_svmlight(path, n_features=8, dense=True)
    return X, y


MFEAT_VIEWS = {
    "fou": "76 Fourier coefficients of the character shapes",
    "fac": "216 profile correlations",
    "kar": "64 Karhunen-Loeve coefficients",
    "pix": "240 pixel averages in 2 x 3 windows",
    "zer": "47 Zernike moments",
    "mor": "6 morphological features",
}


def load_mfeat() -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Load the UCI Multiple Features handwritten digits: six views of 2000 digits.

    Returns
    -------
    views : dict of str to ndarray of shape (2000, D_v), dtype float64
        The six feature descriptors of the same digits, in the order ``fou`` (76 Fourier
        coefficients), ``fac`` (216 profile correlations), ``kar`` (64 Karhunen-Loeve
        coefficients), ``pix`` (240 pixel averages in 2 x 3 windows), ``zer`` (47 Zernike
        moments) and ``mor`` (6 morphological features). Row i is the same digit in every view.
    y : ndarray of shape (2000,), dtype int64
        Digit 0..9, 200 of each (the UCI files are in blocks of 200 per digit).

    Raises
    ------
    FileNotFoundError
        If a bundled data file is missing (broken installation).

    Notes
    -----
    Source: UCI Machine Learning Repository, "Multiple Features" (donated 1998 by R. P. W.
    Duin), files ``mfeat-*`` stored gzip-compressed, otherwise unchanged. No missing values.
    Multi-view input for :class:`~mklearn.MKLClassifier` (``fit(views, y)``).

    Citation: R. Duin (1998), Multiple Features, UCI Machine Learning Repository;
    A. K. Jain, R. P. W. Duin and J. Mao (2000), "Statistical Pattern Recognition: A Review",
    IEEE TPAMI 22(1):4-37.
    """
    views = {}
    for name in MFEAT_VIEWS:
        with bundled_file("mfeat", f"mfeat-{name}.gz").open("rb") as handle:
            values = np.array(gzip.decompress(handle.read()).split(), dtype=np.float64)
        views[name] = values.reshape(2000, -1)
    return views, np.repeat(np.arange(10, dtype=np.int64), 200)
