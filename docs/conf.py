"""Sphinx configuration of mklearn's documentation site (``make docs``)."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

import mklearn  # noqa: E402

project = "mklearn"
author = "mklearn developers"
copyright = "mklearn developers"
release = mklearn.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/GALLERY_HEADER.rst", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json",
                    "auto_examples/*.md5"]
templates_path = ["_templates"]

# Markdown pages: heading anchors so that "page.md#section" links resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath", "colon_fence"]

# API reference: one page per public name, numpydoc sections.
autosummary_generate = True
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# The gallery: scripts named plot_*.py under examples/ run at build time and draw their
# figures; the other scripts there (command-line experiments) are not part of it.
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"^(?!plot_).*\.py$",
    "backreferences_dir": "api/generated/backreferences",
    "doc_module": ("mklearn",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "min_reported_time": 0,
    "write_computation_times": True,
}
if os.environ.get("MKLEARN_DOCS_GALLERY"):  # e.g. "plot_products" to run one example
    sphinx_gallery_conf["filename_pattern"] = os.environ["MKLEARN_DOCS_GALLERY"]

intersphinx_mapping = {}

html_theme = "pydata_sphinx_theme"
html_title = f"mklearn {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []
html_show_sourcelink = False
copybutton_prompt_text = r"\$ |>>> "
copybutton_prompt_is_regexp = True
