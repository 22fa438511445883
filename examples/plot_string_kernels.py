"""
String kernels on splice sites
==============================

The DNA splice-junction data (``load_splice``): sequences of 60 nucleotides, labelled by
whether they hold an exon-intron boundary. The weighted-degree (WD) kernel counts the
k-mers two sequences share at the same positions; split into one sub-kernel per k-mer
length, MKL learns which lengths matter (the SILP-MKL paper, Sonnenburg et al., JMLR 2006).
The estimators take the sequences themselves as ``X``.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from mklearn import MKLClassifier
from mklearn.datasets import load_splice
from mklearn.kernels.strings import wd_sub_kernels

seqs, y = load_splice()
seqs, y = np.asarray(seqs)[:800], np.asarray(y)[:800]
train, test, y_train, y_test = train_test_split(seqs, y, test_size=0.4, stratify=y,
                                                random_state=0)
model = MKLClassifier(kernels=wd_sub_kernels(10, by="kmer"), regularizer="l1", C=10.0,
                      kernel_normalization="trace").fit(train, y_train)
print(f"{len(train)} training sequences, test accuracy {model.score(test, y_test):.3f}")
print(dict(zip(model.kernel_names_, model.kernel_weights_.round(3), strict=True)))

# %%
# The learned weight of each k-mer length.
fig, ax = plt.subplots(figsize=(7, 3.5))
lengths = np.arange(1, len(model.kernel_weights_) + 1)
ax.bar(lengths, model.kernel_weights_, color="tab:green")
ax.set_xticks(lengths)
ax.set_xlabel("k-mer length k of the WD sub-kernel")
ax.set_ylabel("learned weight")
ax.set_title("Splice: weighted-degree sub-kernels by k-mer length")
fig.tight_layout()
plt.show()
