"""Validation of kernel groupings and the per-group reductions."""

import numpy as np
import pytest

from mklearn.groups import KernelGroups, check_groups


def test_labels_and_partitions_give_the_same_groups():
    by_labels = check_groups([0, 0, 1, 2, 1], 5)
    by_parts = check_groups([[0, 1], [2, 4], [3]], 5)
    assert by_labels.codes.tolist() == by_parts.codes.tolist() == [0, 0, 1, 2, 1]
    assert by_labels.sizes.tolist() == [2, 2, 1]
    named = check_groups(["fou", "fou", "pix"], 3)
    assert named.names == ["fou", "pix"] and named.codes.tolist() == [0, 0, 1]


def test_reductions_and_normalisation():
    groups = check_groups([1, 0, 1, 0, 1], 5)
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert groups.sum(x).tolist() == [6.0, 9.0]
    assert groups.max(x).tolist() == [4.0, 5.0]
    gamma = groups.normalize_log(np.array([0.0, 1.0, np.log(2.0), 1.0, 700.0]))
    assert groups.sum(gamma) == pytest.approx([1.0, 1.0])
    assert gamma[1] == pytest.approx(0.5) and gamma[4] == pytest.approx(1.0)  # no overflow


def test_single_group():
    groups = KernelGroups.single(4)
    assert groups.n_groups == 1 and groups.sizes.tolist() == [4]


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ([0, 0, 1], "groups has 3 labels but there are 4 base kernels"),
        ([0, 0, 2, 2], "group 1 is empty"),
        ([[0, 1], [], [2, 3]], "group 1 of the partition is empty"),
        ([[0, 1], [2]], "kernel 3 is in no group"),
        ([[0, 1], [1, 2, 3]], "kernel 1 is in groups 0 and 1"),
        ([[0, 1], [2, 7]], "group 1 holds kernel 7, outside 0..3"),
        ([-1, 0, 0, 0], "must be >= 0"),
        ([[0.0, 1.0], [2, 3]], "kernel indices must be ints"),
        (np.zeros((2, 2), int), "1-D array"),
        ([0.5, 0.5, 1.0, 1.0], "int or str labels"),
    ],
)
def test_bad_groups_say_which(groups, message):
    with pytest.raises(ValueError, match=message):
        check_groups(groups, 4)
