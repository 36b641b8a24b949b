"""Records are built with keyword arguments: every dataclass of memory-agent is keyword-only,
and no record is a tuple that could be built (or unpacked) by position.

Holds the house rule for records added later too: it walks every module of the package."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from collections.abc import Iterator

import memory_action


def _modules() -> Iterator[object]:
    for info in pkgutil.walk_packages(memory_action.__path__, prefix="memory_action."):
        yield importlib.import_module(info.name)


def _own_classes() -> Iterator[type]:
    for module in _modules():
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == getattr(module, "__name__", None):
                yield value


def test_every_dataclass_is_keyword_only() -> None:
    positional = [
        f"{cls.__module__}.{cls.__qualname__}.{field.name}"
        for cls in _own_classes()
        if dataclasses.is_dataclass(cls)
        for field in dataclasses.fields(cls)
        if field.init and not field.kw_only
    ]
    assert positional == []


def test_no_record_is_a_named_tuple() -> None:
    tuples = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _own_classes()
        if issubclass(cls, tuple) and hasattr(cls, "_fields")
    ]
    assert tuples == []


def test_the_walk_sees_the_records() -> None:
    # The rule is only as good as the walk: it must reach records deep in the packages.
    names = {f"{cls.__module__}.{cls.__qualname__}" for cls in _own_classes()}
    assert {
        "memory_action.plan.Plan",
        "memory_action.publish.outcome.RunResult",
        "memory_action.safety.leaks.candidate.Candidate",
    } <= names
