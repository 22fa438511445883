"""Registries of the named parts of mklearn: one per family (kernel types, regularisers,
combinations, tasks), filled by the parts' base classes as subclasses are defined.

A registry maps each part's string name to its class. The estimators' string options, the
command line's choices, the model files' tables and the documentation's lists are all read
from these, so that a part of one's own is one class with its ``name`` (see
``docs/extending.md``).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterator, Mapping, Set
from typing import ClassVar


class Registry(Mapping):
    """A family's parts by name, in the order they were registered.

    Parameters
    ----------
    family : str
        What the parts are, for messages (e.g. "regularizer").
    """

    def __init__(self, family: str):
        self.family = family
        self._parts: dict[str, type] = {}

    def add(self, name: str, part: type) -> None:
        """Register ``part`` under ``name``.

        Raises
        ------
        ValueError
            If ``name`` is not a non-empty string, or another class has it or the class's
            ``__name__`` already (a class defined again in its module, as a module reloaded,
            replaces itself).
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.family} name must be a non-empty string; "
                             f"{part.__name__} has {name!r}")
        held = self._parts.get(name)
        if held is not None and _qualified(held) != _qualified(part):
            raise ValueError(
                f"{self.family} name {name!r} is taken by {_qualified(held)}; give "
                f"{_qualified(part)} another name"
            )
        namesake = self.by_class_name(part.__name__)  # model files name the class
        if namesake is not None and _qualified(namesake) != _qualified(part):
            raise ValueError(
                f"a registered {self.family} class is called {part.__name__} already "
                f"({_qualified(namesake)}); rename {_qualified(part)}"
            )
        self._parts[name] = part

    def __setitem__(self, name: str, part: type) -> None:
        """Deprecated: ``registry[name] = cls`` registers ``cls`` as :meth:`add` does."""
        warnings.warn(
            f"assigning into the {self.family} registry is deprecated and will be removed in "
            "a future release; define the class with its name instead (docs/extending.md)",
            FutureWarning, stacklevel=2)
        self.add(name, part)

    def names(self, *extra: str) -> Set:
        """The registered names and ``extra`` (e.g. "auto") as a live set: parts registered
        later are in it too (for scikit-learn's ``StrOptions``)."""
        return _Names(self._parts, extra)

    def by_class_name(self, class_name: str):
        """The registered class whose ``__name__`` is ``class_name``, or None."""
        return next((part for part in self._parts.values() if part.__name__ == class_name),
                    None)

    def lookup(self, name):
        """The class registered as ``name``; ValueError listing the names otherwise."""
        part = self._parts.get(name) if isinstance(name, str) else None
        if part is None:
            raise ValueError(f"unknown {self.family} {name!r}; choose one of "
                             f"{', '.join(repr(n) for n in self._parts)}")
        return part

    def __getitem__(self, name: str) -> type:
        return self._parts[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    def __repr__(self) -> str:
        return f"Registry({self.family!r}: {', '.join(self._parts)})"


class Named:
    """Base of a part family's base class: a subclass defined with a name,
    ``class Mine(Base, name="mine")``, is registered in the family's :attr:`registry` and
    gets that ``name``; one without is not registered."""

    registry: ClassVar[Registry]
    name: str

    def __init_subclass__(cls, *, name: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.registry.add(name, cls)
            cls.name = name


class _Names(Set):
    """A registry's names and some extra strings, read when asked."""

    def __init__(self, parts: dict, extra: tuple):
        self._parts = parts
        self._extra = extra

    @classmethod
    def _from_iterable(cls, iterable):
        return frozenset(iterable)

    def __contains__(self, name) -> bool:
        return name in self._extra or name in self._parts

    def __iter__(self) -> Iterator[str]:
        yield from self._extra
        yield from (name for name in self._parts if name not in self._extra)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _qualified(part: type) -> str:
    return f"{part.__module__}.{part.__qualname__}"


def moved_names(module: str, moved: Mapping[str, str]):
    """A module's ``__getattr__`` (PEP 562) for names that moved to another module: reading
    ``module.name`` returns ``moved[name]``'s object with a ``FutureWarning`` that names the
    new place; other names raise ``AttributeError`` as usual."""

    def __getattr__(name):
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} moved to {moved[name]}.{name}; import it from there "
                      "(the old place will stop working in the next release)", FutureWarning,
                      stacklevel=2)
        return getattr(importlib.import_module(moved[name]), name)

    return __getattr__

