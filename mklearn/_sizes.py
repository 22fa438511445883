"""Byte sizes: the units, and the size of every block of work, in one place.

Work over ``n x n`` kernels is cut into blocks whose size bounds the memory a step touches at
once: small enough to stay in the last-level cache or to add little to a fit's planned memory
(:mod:`mklearn.memory`), large enough that numpy's and BLAS's per-call overhead vanishes.
Every size is in bytes, written as a multiple of :data:`MB`.
"""

MB = 1 << 20  # a megabyte as LIBSVM's -m counts it (2**20 bytes)
GIB = 1 << 30  # a gibibyte


def byte_words(nbytes: int) -> str:
    """``nbytes`` as a message says it: "2.19 GiB", or "140 MB" below a gibibyte."""
    return f"{nbytes / GIB:.3g} GiB" if nbytes >= GIB else f"{nbytes / MB:.3g} MB"


# passes over the support's rows (quadratic terms, products, rows of K(d)): a chunk of kernel
# rows stays in a core's share of the last-level cache
PASS_CHUNK_BYTES = 4 * MB
# distance rows computed at once when a row cache does not keep them (RBF tables)
DISTANCE_CHUNK_BYTES = 16 * MB
# rows of every base kernel read per block of a product over a support: few calls, memory
# small beside a fit's row cache
SUPPORT_BLOCK_BYTES = 64 * MB
# rows of the base kernels computed per block when the support does not fit in the row cache
ROW_BLOCK_BYTES = 64 * MB
# rows a row cache asks its provider for in one call (``load_many``)
LOAD_MANY_BYTES = 8 * MB
# rows of X standardised per band of a kernel bank: freed bands leave no resident heap
BAND_BYTES = 2 * MB
# kernel rows combined at once when MWUMKL evaluates its objective J(mu)
OBJECTIVE_BLOCK_BYTES = 32 * MB
# test-versus-support kernel values computed at once in predict and decision_function
PREDICT_BLOCK_BYTES = 16 * MB
# the same values for the few training points a fit's own checks predict
CHECK_BLOCK_BYTES = 4 * MB
# rows of the kernels that row_dots and combined_rows cannot fuse (a float32 bank's, non-RBF),
# stored at once: whole, they were fresh pages of hundreds of MB a call
STORED_ROWS_BYTES = 4 * MB
