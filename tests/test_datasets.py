"""Tests for mklearn.datasets: bundled loaders, name registry and file readers."""

from importlib import resources

import numpy as np
import pytest
import scipy.sparse as sp

from mklearn import datasets

# name -> (loader, n_samples, n_features, n_positive, n_negative); counts verified by
# parsing the bundled files (see mklearn/datasets/SOURCES.md).
CLASSIFICATION_SETS = {
    "sonar": (datasets.load_sonar, 208, 60, 111, 97),
    "ionosphere": (datasets.load_ionosphere, 351, 34, 225, 126),
    "liver-disorders": (datasets.load_liver_disorders, 345, 6, 200, 145),
    "australian": (datasets.load_australian, 690, 14, 307, 383),
    "breast-cancer": (datasets.load_breast_cancer, 683, 9, 239, 444),
    "pima": (datasets.load_pima, 768, 8, 268, 500),
    "wpbc": (datasets.load_wpbc, 194, 33, 46, 148),
    "heart": (datasets.load_heart, 270, 13, 120, 150),
    "house-votes": (datasets.load_house_votes, 435, 16, 168, 267),
    "wdbc": (datasets.load_wdbc, 569, 30, 212, 357),
}


@pytest.mark.parametrize("name", sorted(CLASSIFICATION_SETS))
def test_classification_loader_shape_dtype_and_counts(name):
    loader, n_samples, n_features, n_positive, n_negative = CLASSIFICATION_SETS[name]
    X, y = loader()
    assert X.shape == (n_samples, n_features)
    assert y.shape == (n_samples,)
    assert X.dtype == np.float64
    assert y.dtype == np.int64
    assert not np.isnan(X).any()
    assert set(np.unique(y)) == {-1, 1}
    assert int(np.sum(y == 1)) == n_positive
    assert int(np.sum(y == -1)) == n_negative


@pytest.mark.parametrize("name", sorted(CLASSIFICATION_SETS))
def test_dataset_info_matches_loader(name):
    loader, n_samples, n_features, *_ = CLASSIFICATION_SETS[name]
    info = datasets.dataset_info(name)
    assert info["name"] == name
    assert (info["n_samples"], info["n_features"]) == (n_samples, n_features)
    assert info["task"] == "classification"
    assert "+1" in info["positive_class"] and "-1" in info["positive_class"]
    assert info["citation"]


def test_abalone_regression():
    X, y = datasets.load_abalone()
    assert X.shape == (4177, 8) and isinstance(X, np.ndarray)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert X.min() >= -1.0 and X.max() <= 1.0
    assert len(np.unique(y)) == 28
    assert (y.min(), y.max()) == (1.0, 29.0)
    info = datasets.dataset_info("abalone")
    assert info["task"] == "regression"
    assert (info["n_samples"], info["n_features"]) == X.shape


def test_load_diabetes_is_pima():
    assert datasets.load_diabetes is datasets.load_pima


def test_ionosphere_keeps_constant_column():
    X, _ = datasets.load_ionosphere()
    assert np.all(X[:, 1] == 0.0)


def test_house_votes_coding():
    X, _ = datasets.load_house_votes()
    assert set(np.unique(X)) == {-1.0, 0.0, 1.0}
    assert int(np.sum((X == 0).any(axis=1))) == 203


def test_first_rows_match_files():
    X, y = datasets.load_breast_cancer()  # first file row: 1000025,5,1,1,1,2,1,3,1,1,2
    np.testing.assert_array_equal(X[0], [5, 1, 1, 1, 2, 1, 3, 1, 1])
    assert y[0] == -1
    X, y = datasets.load_liver_disorders()  # first row: 85,92,45,27,31,0.0,1
    np.testing.assert_array_equal(X[0], [85, 92, 45, 27, 31, 0.0])
    assert y[0] == -1
    X, y = datasets.load_wpbc()  # first row: 119513,N,31,18.02,...,5,5
    assert X[0, 0] == 31.0 and X[0, 1] == 18.02 and X[0, -1] == 5.0
    assert y[0] == -1


def test_wdbc_agrees_with_sklearn_copy():
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_wdbc()
    X_ref, y_ref = sklearn_datasets.load_breast_cancer(return_X_y=True)
    np.testing.assert_allclose(X, X_ref)
    np.testing.assert_array_equal(y == 1, y_ref == 0)  # sklearn: 0 = malignant


def test_bundled_files_are_package_resources():
    data = resources.files("mklearn.datasets") / "data"
    assert (data / "sonar" / "sonar.all-data").is_file()
    assert (data / "abalone_scale" / "abalone_scale").is_file()
    assert (resources.files("mklearn.datasets") / "SOURCES.md").is_file()


# --- registry ---------------------------------------------------------------------------


def test_list_datasets():
    names = datasets.list_datasets()
    assert names == sorted(names)
    assert set(names) == set(CLASSIFICATION_SETS) | {"abalone"}


@pytest.mark.parametrize("name", ["sonar", "heart", "abalone", "house-votes"])
def test_load_dataset_round_trip(name):
    X, y = datasets.load_dataset(name)
    info = datasets.dataset_info(name)
    assert X.shape == (info["n_samples"], info["n_features"])
    assert len(y) == info["n_samples"]


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("liver", "liver-disorders"),
        ("BUPA", "liver-disorders"),
        ("liver_disorders", "liver-disorders"),
        ("diabetes", "pima"),
        ("breast_cancer", "breast-cancer"),
        ("Breast-Cancer", "breast-cancer"),
        ("votes", "house-votes"),
        ("house_votes", "house-votes"),
        (" Sonar ", "sonar"),
    ],
)
def test_aliases(alias, canonical):
    assert datasets.dataset_info(alias)["name"] == canonical


def test_alias_loads_same_data():
    X1, y1 = datasets.load_dataset("bupa")
    X2, y2 = datasets.load_liver_disorders()
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)


def test_unknown_name_lists_available():
    with pytest.raises(ValueError, match="unknown dataset 'iris'") as excinfo:
        datasets.load_dataset("iris")
    for name in datasets.list_datasets():
        assert name in str(excinfo.value)
    with pytest.raises(ValueError, match="available"):
        datasets.dataset_info("nope")


# --- load_svmlight ----------------------------------------------------------------------


def test_load_svmlight_dense_and_sparse(tmp_path):
    path = tmp_path / "small.svm"
    path.write_text("+1 1:0.5 3:2\n-1 2:-1.5\n2 3:1 # comment\n")
    X, y = datasets.load_svmlight(path)
    assert isinstance(X, np.ndarray) and X.dtype == np.float64
    np.testing.assert_array_equal(X, [[0.5, 0, 2], [0, -1.5, 0], [0, 0, 1]])
    np.testing.assert_array_equal(y, [1.0, -1.0, 2.0])
    assert y.dtype == np.float64

    X_sparse, _ = datasets.load_svmlight(str(path), n_features=5, dense=False)
    assert sp.issparse(X_sparse) and X_sparse.format == "csr"
    assert X_sparse.shape == (3, 5)
    np.testing.assert_array_equal(X_sparse.toarray()[:, :3], X)


def test_load_svmlight_n_features_too_small(tmp_path):
    path = tmp_path / "small.svm"
    path.write_text("1 1:1 4:1\n")
    with pytest.raises(ValueError, match="n_features=2"):
        datasets.load_svmlight(path, n_features=2)


def test_load_svmlight_malformed(tmp_path):
    path = tmp_path / "bad.svm"
    path.write_text("M 1:0.5 2:1\n")
    with pytest.raises(ValueError) as excinfo:
        datasets.load_svmlight(path)
    message = str(excinfo.value)
    assert message.startswith(f"could not parse {path} as LIBSVM format: ")
    assert "expected lines like '<label> <index>:<value> ...'" in message
    assert isinstance(excinfo.value.__cause__, ValueError)


def test_load_svmlight_empty_and_missing(tmp_path):
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    with pytest.raises(ValueError, match="no samples"):
        datasets.load_svmlight(empty)
    missing = tmp_path / "missing.svm"
    with pytest.raises(FileNotFoundError, match="missing.svm"):
        datasets.load_svmlight(missing)


# --- load_csv ---------------------------------------------------------------------------


def test_load_csv_string_labels(tmp_path):
    path = tmp_path / "sonar_like.csv"
    path.write_text("0.1,0.2,M\n0.3,0.4,R\n\n0.5,0.6,M\n")
    X, y = datasets.load_csv(path)
    np.testing.assert_array_equal(X, [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    assert X.dtype == np.float64
    assert y.dtype.kind == "U"
    assert y.tolist() == ["M", "R", "M"]


def test_load_csv_header_and_label_column(tmp_path):
    path = tmp_path / "with_header.csv"
    path.write_text("label,height,weight\n1,1.5,60\n-1,1.8,80\n")
    X, y = datasets.load_csv(path, label_column=0)
    np.testing.assert_array_equal(X, [[1.5, 60], [1.8, 80]])
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, [1.0, -1.0])


def test_load_csv_header_options(tmp_path):
    path = tmp_path / "numbers.csv"
    path.write_text("1,2,3\n4,5,6\n")
    X, _ = datasets.load_csv(path)  # infer: first line is numeric, so it is data
    assert X.shape == (2, 2)
    X, y = datasets.load_csv(path, header=True)
    np.testing.assert_array_equal(X, [[4, 5]])
    np.testing.assert_array_equal(y, [6.0])
    with pytest.raises(ValueError, match="header"):
        datasets.load_csv(path, header="yes")


def test_load_csv_whitespace_delimited(tmp_path):
    path = tmp_path / "table.dat"
    path.write_text("1.0 2.0\t0\n3.0  4.0 1\n")
    X, y = datasets.load_csv(path)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(y, [0.0, 1.0])


def test_load_csv_explicit_delimiter(tmp_path):
    path = tmp_path / "semi.txt"
    path.write_text("1;2;a\n3;4;b\n")
    X, y = datasets.load_csv(path, delimiter=";")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    assert y.tolist() == ["a", "b"]


def test_load_csv_missing_value_names_line(tmp_path):
    path = tmp_path / "holes.csv"
    path.write_text("a,b,y\n1,2,1\n3,?,0\n5,,1\n")
    with pytest.raises(ValueError, match=r"holes\.csv, line 3: missing value '\?'") as excinfo:
        datasets.load_csv(path)
    assert "impute" in str(excinfo.value)


def test_load_csv_empty_field_is_missing(tmp_path):
    path = tmp_path / "holes.csv"
    path.write_text("1,2,1\n5,,1\n")
    with pytest.raises(ValueError, match="line 2: missing value"):
        datasets.load_csv(path)


def test_load_csv_non_numeric_feature(tmp_path):
    path = tmp_path / "text.csv"
    path.write_text("1,2,1\n1,abc,0\n")
    with pytest.raises(ValueError, match=r"line 2: non-numeric feature value 'abc' in column 2"):
        datasets.load_csv(path)


def test_load_csv_ragged_rows_and_bad_label_column(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("1,2,1\n1,2\n")
    with pytest.raises(ValueError, match="line 2: expected 3 fields, found 2"):
        datasets.load_csv(path)
    path.write_text("1,2,1\n")
    with pytest.raises(ValueError, match="label_column=5 is out of range"):
        datasets.load_csv(path, label_column=5)


def test_load_csv_missing_and_empty_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.csv"):
        datasets.load_csv(tmp_path / "nothere.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(ValueError, match="no data rows"):
        datasets.load_csv(empty)


# --- load_data_file ---------------------------------------------------------------------


def test_load_data_file_sniffs_libsvm(tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("# a comment\n+1 3:0.5 7:1\n-1 1:2\n")
    X, y = datasets.load_data_file(path)
    assert X.shape == (2, 7)
    np.testing.assert_array_equal(y, [1.0, -1.0])
    assert X[0, 2] == 0.5 and X[1, 0] == 2.0


def test_load_data_file_sniffs_csv(tmp_path):
    comma = tmp_path / "data.csv"
    comma.write_text("f1,f2,label\n0.5,1,1\n2,3,-1\n")
    X, y = datasets.load_data_file(comma)
    np.testing.assert_array_equal(X, [[0.5, 1], [2, 3]])
    np.testing.assert_array_equal(y, [1.0, -1.0])

    spaces = tmp_path / "data.dat"
    spaces.write_text("1 0.5 1\n-1 2 3\n")
    X, y = datasets.load_data_file(spaces, label_column=0)
    np.testing.assert_array_equal(X, [[0.5, 1], [2, 3]])
    np.testing.assert_array_equal(y, [1.0, -1.0])


def test_load_data_file_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.txt"):
        datasets.load_data_file(tmp_path / "absent.txt")
