"""0.1.0 module paths, kept importable: ``scrapy_urlunify.dupefilter`` is now
``scrapy_urlunify.integration.dupefilter``, and so on. A project's settings name components by
module path, so a rename must not break a crawl that was configured for 0.1.0."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

#: old module (relative to the package) -> new module
MOVED = {
    "rules": "core.rules",
    "params": "core.params",
    "domains": "core.domains",
    "filters": "core.filters",
    "policy": "core.policy",
    "unify": "core.unify",
    "signatures": "learning.page_signature",
    "learning": "learning.learner",
    "settings": "integration.settings",
    "context": "integration.context",
    "middleware": "integration.links",
    "pages": "integration.signatures",
    "fingerprinter": "integration.fingerprinter",
    "dupefilter": "integration.dupefilter",
    "redis_dupefilter": "integration.redis_dupefilter",
    "jobdir": "integration.resume",
    "pipelines": "integration.pipelines",
    "addon": "integration.addon",
    "commands": "integration.command",
    "storage": "integration.store_faults",
    "cli": "cli.main",
    "inspect": "cli.store",
}

#: 0.1.0 class names inside the moved modules
RENAMED = {
    "UrlUnifyMiddleware": "LinkMiddleware",
    "UnifyFingerprinter": "Fingerprinter",
    "UnifyDupeFilter": "DupeFilter",
    "UnifyRedisDupeFilter": "RedisDupeFilter",
    "PageSignatureMiddleware": "SignatureMiddleware",
    "UrlUnifyCommand": "Command",
}


class _Alias(ModuleType):
    """The old module: every attribute is read from the new one (old class names included)."""

    _target: str

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(self._target)
        return getattr(module, RENAMED.get(name, name))


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, package: str) -> None:
        self.package = package

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        head, _, tail = fullname.rpartition(".")
        if head != self.package or tail not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = _Alias(spec.name)
        module._target = f"{self.package}.{MOVED[spec.name.rpartition('.')[2]]}"
        return module

    def exec_module(self, module: ModuleType) -> None:
        pass


def install(package: str) -> None:
    if not any(isinstance(f, _Finder) and f.package == package for f in sys.meta_path):
        sys.meta_path.append(_Finder(package))
