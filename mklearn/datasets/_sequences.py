"""Loaders of the bundled DNA sequence sets, for string kernels.

Each returns ``(seqs, y)``: ``seqs`` a 1-D numpy array of upper-case str over ``ACGT`` and
``y`` int64 in {-1, +1}. Provenance and checksums are in ``SOURCES.md`` next to this file.
"""

from __future__ import annotations

import bz2

import numpy as np

from ._resources import bundled_file, read_bundled_rows

_C_ELEGANS_WINDOW = (157, 239)  # the 82 nt of C_elegans_acc_seq.csv inside the 398-nt FASTA


def load_splice(task: str = "EI") -> tuple[np.ndarray, np.ndarray]:
    """Load UCI splice-junction sequences (primate, 60 nt) as a binary task.

    Parameters
    ----------
    task : {"EI", "IE"}, default="EI"
        Positive class: "EI" exon-intron boundaries (donor sites) versus the rest (IE and
        neither), or "IE" intron-exon boundaries (acceptor sites) versus the rest.

    Returns
    -------
    seqs : ndarray of shape (3175,), dtype str
        60-nt sequences over ACGT. The 15 UCI sequences holding IUPAC ambiguity codes
        (N, D, R, S) are left out (5 EI, 3 IE, 7 N).
    y : ndarray of shape (3175,), dtype int64
        +1 for the positive class (EI: 762, IE: 765), -1 otherwise.

    Raises
    ------
    ValueError
        If ``task`` is not "EI" or "IE".

    Notes
    -----
    Source: UCI, "Molecular Biology (Splice-junction Gene Sequences)", ``splice.data``
    (GenBank 64.1). Citation: M. O. Noordewier, G. G. Towell and J. W. Shavlik (1991),
    "Training knowledge-based neural networks to recognize genes in DNA sequences", NIPS 3.
    """
    if task not in ("EI", "IE"):
        raise ValueError(f"task must be 'EI' (donor vs rest) or 'IE' (acceptor vs rest); got "
                         f"{task!r}.")
    rows = read_bundled_rows("splice-junction", "splice.data", ",")
    rows = [row for row in rows if set(row[2]) <= set("ACGT")]
    seqs = np.array([row[2] for row in rows])
    y = np.where(np.array([row[0] for row in rows]) == task, 1, -1).astype(np.int64)
    return seqs, y


def load_promoters() -> tuple[np.ndarray, np.ndarray]:
    """Load the E. coli promoter sequences (UCI, 106 sequences of 57 nt).

    Returns
    -------
    seqs : ndarray of shape (106,), dtype str
        57-nt sequences, upper-cased (the file is lower case).
    y : ndarray of shape (106,), dtype int64
        +1 for promoters (53), -1 for non-promoters (53).

    Notes
    -----
    Source: UCI, "Molecular Biology (Promoter Gene Sequences)", ``promoters.data``. Citation:
    G. G. Towell, J. W. Shavlik and M. O. Noordewier (1990), "Refinement of approximate domain
    theories by knowledge-based neural networks", AAAI-90, 861-866.
    """
    rows = read_bundled_rows("promoters", "promoters.data", ",")
    seqs = np.array([row[2].upper() for row in rows])
    y = np.where(np.array([row[0] for row in rows]) == "+", 1, -1).astype(np.int64)
    return seqs, y


def load_c_elegans_acceptor() -> tuple[np.ndarray, np.ndarray]:
    """Load 2,200 C. elegans acceptor splice-site candidates (82 nt, the AG at 40-41).

    Returns
    -------
    seqs : ndarray of shape (2200,), dtype str
        82-nt windows around a candidate AG (0-based positions 40 and 41).
    y : ndarray of shape (2200,), dtype int64
        +1 for true acceptor sites (200), -1 for decoys (2000).

    Notes
    -----
    Source: shogun-data ``easysvm/C_elegans_acc_seq.csv`` (the GC-content columns of the
    companion file are not used). Every window is positions 157-238 of a sequence of
    :func:`load_c_elegans_acceptor_large`. Citation: S. Sonnenburg, G. Schweikert, P. Philips,
    J. Behr and G. Raetsch (2007), "Accurate splice site prediction using support vector
    machines", BMC Bioinformatics 8(Suppl 10):S7.
    """
    rows = read_bundled_rows("c-elegans-acceptor-splice", "C_elegans_acc_seq.csv", ",")
    seqs = np.array([row[1] for row in rows])
    y = np.where(np.array([float(row[0]) for row in rows]) > 0, 1, -1).astype(np.int64)
    return seqs, y


def load_c_elegans_acceptor_large(
    n_samples: int | None = None, *, window: tuple[int, int] | None = _C_ELEGANS_WINDOW
) -> tuple[np.ndarray, np.ndarray]:
    """Load up to 100,000 C. elegans acceptor splice-site candidates (398 nt each).

    Parameters
    ----------
    n_samples : int, optional
        Read only the first ``n_samples`` sequences (file order: by chromosome position, so take
        a random subset of a larger read for a representative sample). Default all 100,000.
    window : (start, stop) or None, default=(157, 239)
        0-based half-open slice of each 398-nt sequence; the default is the 82-nt window of
        :func:`load_c_elegans_acceptor` (AG at 40-41). None keeps all 398 nt (AG at 197-198).

    Returns
    -------
    seqs : ndarray of shape (n_samples,), dtype str
    y : ndarray of shape (n_samples,), dtype int64
        +1 for true acceptor sites (3,301 of all 100,000), -1 otherwise.

    Raises
    ------
    ValueError
        If ``n_samples`` is not a positive int or ``window`` is not within 0..398.

    Notes
    -----
    Source: shogun-data ``easysvm/C_elegans_acc_100000.fasta.bz2``, the first 100,000 examples
    of the authors' ``C_elegans_acc_all_examples.fasta`` (headers ``label=+1`` / ``label=-1``).
    Citation as :func:`load_c_elegans_acceptor`.
    """
    if n_samples is not None and (not isinstance(n_samples, (int, np.integer))
                                  or isinstance(n_samples, bool) or n_samples < 1):
        raise ValueError(f"n_samples must be a positive int or None; got {n_samples!r}.")
    if window is not None:
        start, stop = window
        if not 0 <= start < stop <= 398:
            raise ValueError(f"window must be (start, stop) with 0 <= start < stop <= 398; got "
                             f"{window!r}.")
    labels, seqs = [], []
    limit = np.inf if n_samples is None else int(n_samples)
    path = bundled_file("c-elegans-acceptor-splice", "C_elegans_acc_100000.fasta.bz2")
    with path.open("rb") as raw, bz2.open(raw, "rt", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(">"):
                if len(labels) >= limit:
                    break
                labels.append(1 if line.rstrip().endswith("label=1") else -1)
            else:
                seq = line.strip()
                seqs.append(seq if window is None else seq[window[0]:window[1]])
    return np.array(seqs), np.array(labels, dtype=np.int64)
