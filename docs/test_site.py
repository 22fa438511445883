"""Checks of the built documentation site (``make docs`` runs them after the build).

- every internal link and image of every page resolves (the file, and the anchor if any);
- every gallery example has its page, and the page shows a figure the example drew;
- every public name has its API page: the names of ``mklearn.__all__`` and of the public
  submodules' ``__all__`` (their public classes and functions where a module has none).

The site is read from ``docs/_build/html``; without it these tests fail (build it first).
"""

from __future__ import annotations

import importlib
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

DOCS = Path(__file__).resolve().parent
SITE = DOCS / "_build" / "html"
EXAMPLES = DOCS.parent / "examples"
# The modules of the API reference, each with its page of docs/api/.
PUBLIC_MODULES = {
    "mklearn": "estimators", "mklearn.kernels": "kernels",
    "mklearn.formulation.regularizers": "regularizers", "mklearn.solvers": "solvers",
    "mklearn.datasets": "datasets", "mklearn.plotting": "plotting",
    "mklearn.extending": "extending",
}
PUBLIC_EXTRAS = ["mklearn.fit_plan.LongFitWarning", "mklearn.validation.DegenerateModelWarning"]
MIN_EXAMPLES = 10


class _Page(HTMLParser):
    """The ids, links (href) and images (src) of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.images = set(), [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag == "link" and attrs.get("href") and attrs.get("rel") != "canonical":
            self.links.append(attrs["href"])
        if tag == "script" and attrs.get("src"):
            self.links.append(attrs["src"])


@cache
def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _pages():
    assert (SITE / "index.html").exists(), f"no site at {SITE}: build it with `make docs`"
    return sorted(p for p in SITE.rglob("*.html") if "_static" not in p.relative_to(SITE).parts)


def _broken_targets(page_path: Path):
    page = _parse(page_path)
    for reference in page.links + page.images:
        parts = urlsplit(reference)
        if parts.scheme or parts.netloc or reference.startswith(("mailto:", "javascript:")):
            continue  # external
        target = page_path if not parts.path else (page_path.parent / unquote(parts.path))
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            yield reference
        elif parts.fragment and target.suffix == ".html" and \
                unquote(parts.fragment) not in _parse(target.resolve()).ids:
            yield reference


def test_every_internal_link_resolves():
    pages = _pages()
    broken = {str(p.relative_to(SITE)): sorted(set(_broken_targets(p))) for p in pages}
    assert {page: refs for page, refs in broken.items() if refs} == {}
    assert len(pages) > 50


def _examples():
    return sorted(EXAMPLES.glob("plot_*.py"))


def test_the_gallery_has_its_examples():
    assert len(_examples()) >= MIN_EXAMPLES


@pytest.mark.parametrize("script", _examples(), ids=lambda p: p.stem)
def test_every_example_page_shows_its_figure(script):
    _pages()
    page_path = SITE / "auto_examples" / f"{script.stem}.html"
    assert page_path.exists(), f"no gallery page for {script.name}"
    figures = [src for src in _parse(page_path).images
               if f"sphx_glr_{script.stem}_" in src and "thumb" not in src]
    assert figures, f"{page_path.name} shows no figure of {script.name}"
    assert all((page_path.parent / src).exists() for src in figures)


def _public_names(module_name):
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:  # the module's own public classes and functions
        names = [name for name, value in vars(module).items()
                 if not name.startswith("_") and callable(value)
                 and getattr(value, "__module__", None) == module_name]
    return [f"{module_name}.{name}" for name in names if not name.startswith("__")]


PUBLIC_NAMES = [name for module in PUBLIC_MODULES for name in _public_names(module)]


def test_the_public_names_are_collected():
    assert {"mklearn.MKLClassifier", "mklearn.save_model", "mklearn.kernels.RBF",
            "mklearn.datasets.load_sonar", "mklearn.plotting.plot_convergence",
            "mklearn.formulation.regularizers.KLDivergence"} <= set(PUBLIC_NAMES)


@pytest.mark.parametrize("name", PUBLIC_NAMES + PUBLIC_EXTRAS)
def test_every_public_name_has_an_api_page(name):
    _pages()
    page = SITE / "api" / "generated" / f"{name}.html"
    assert page.exists(), f"{name} has no API page: list it in docs/api/"
    assert name.rsplit(".", 1)[1] in page.read_text(encoding="utf-8")
