# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""Validation by import for `cpprof trace-json`.

Run with the workload's own Python, from the directory the workload will be launched from. Reads
one JSON request on stdin and writes one JSON answer on stdout (schema cpprof.validate_trace/1).
Standard library only; torch is imported only for discovery.

Request:
  {"entries":  [{"module": "pkg.mod", "function": "Class.method"}, ...],
   "aliases":  {"ALIAS": "REAL", ...},      # vendored code importing itself as ALIAS
   "discover": [{"package": "PKG", "match": "REGEX"}, ...],  # cpprof sends "" (every class) and
                                             # filters by its own RE2 pattern, so one syntax applies
   "entry_module": "MOD" or null}           # what `-m MOD` will launch: never imported here

Answer:
  {"schema": "cpprof.validate_trace/1", "python": ..., "python_version": ...,
   "entries":    [{"module", "function", "ok", "reason", "detail", "missing_module",
                   "defined_in", "has_main_block"}, ...],   # one per request entry, same order
   "discovered": [{"module", "function", "class"}, ...],
   "main_module": "MOD" or "PKG.__main__" or null,        # what runs as __main__
   "entry_module_classes": [{"module", "class"}, ...],      # matching classes found (by parsing,
                                                            # not importing) in the entry module
   "errors":     [{"package", "module", "detail"}, ...]}    # discovery problems

Reasons: module_not_importable, class_missing, function_missing, method_missing, not_a_class,
not_callable, runs_as_main (the module, or the one defining the class, is what `-m entry_module`
runs as __main__, where nsys cannot annotate anything).
"""
import ast
import contextlib
import importlib
import importlib.abc
import importlib.util
import inspect
import json
import os
import pkgutil
import platform
import re
import sys


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, real_name):
        self.real_name = real_name

    def create_module(self, spec):
        return importlib.import_module(self.real_name)

    def exec_module(self, module):
        pass  # already executed under its real name


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Makes `import ALIAS.x` give the very module object `REAL.x` (so isinstance holds)."""

    def __init__(self, aliases):
        self.aliases = aliases

    def find_spec(self, fullname, path=None, target=None):
        for alias, real in self.aliases.items():
            if fullname == alias or fullname.startswith(alias + "."):
                real_name = real + fullname[len(alias):]
                return importlib.util.spec_from_loader(fullname, _AliasLoader(real_name))
        return None


def _exc_text(exc):
    return f"{type(exc).__name__}: {exc}"


def _has_main_block(module):
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return re.search(r"__name__\s*==\s*['\"]__main__['\"]", f.read()) is not None
    except OSError:
        return False


def main_module_of(entry_module):
    """The module that `python -m entry_module` runs as __main__ (a package runs its __main__)."""
    if not entry_module:
        return None
    try:
        spec = importlib.util.find_spec(entry_module)
    except BaseException:  # noqa: BLE001 (a parent package failing to import)
        spec = None
    if spec is not None and spec.submodule_search_locations is not None:
        return entry_module + ".__main__"
    return entry_module


def check_entry(module_name, function, main_module=None):
    result = {"module": module_name, "function": function, "ok": False}
    if main_module and module_name == main_module:
        result["reason"] = "runs_as_main"
        result["detail"] = f"module '{module_name}' is launched with -m, so it runs as __main__"
        return result
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:  # noqa: BLE001 (SystemExit, errors raised by the module itself)
        result["reason"] = "module_not_importable"
        result["detail"] = _exc_text(exc)
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            result["missing_module"] = exc.name
        return result
    parts = function.split(".")
    obj = module
    for i, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            owner = module_name if i == 0 else ".".join(parts[:i])
            if i == 0:
                result["reason"] = "class_missing" if len(parts) > 1 else "function_missing"
                result["detail"] = f"module '{owner}' has no attribute '{part}'"
            else:
                result["reason"] = "method_missing"
                result["detail"] = f"class '{owner}' has no attribute '{part}'"
            return result
        except BaseException as exc:  # noqa: BLE001 (a property or __getattr__ raising)
            result["reason"] = "method_missing"
            result["detail"] = f"getting '{part}' raised {_exc_text(exc)}"
            return result
        if i < len(parts) - 1 and inspect.ismodule(obj):
            result["reason"] = "not_a_class"
            result["detail"] = (f"'{'.'.join(parts[:i + 1])}' is a module, not a class: "
                                f"use module '{obj.__name__}'")
            return result
    if not callable(obj):
        result["reason"] = "not_callable"
        result["detail"] = f"'{function}' is a {type(obj).__name__}, not a function or method"
        return result
    head = getattr(module, parts[0])
    result["defined_in"] = getattr(head, "__module__", None)
    if main_module and result["defined_in"] == main_module:
        result["reason"] = "runs_as_main"
        result["detail"] = (f"'{parts[0]}' is defined in '{main_module}', which runs as __main__ "
                            f"when launched with -m")
        return result
    result["ok"] = True
    result["has_main_block"] = _has_main_block(module)
    return result


def _entry_module_classes(entry_module, rx, out):
    """Classes matching rx in the entry module, found by parsing it (importing it would run it)."""
    try:
        spec = importlib.util.find_spec(entry_module)
    except BaseException:  # noqa: BLE001
        return
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return
    try:
        with open(spec.origin, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError):
        return
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and rx.search(node.name):
            out["entry_module_classes"].append({"module": entry_module, "class": node.name})


def discover(package, match, main_module, out):
    try:
        import torch.nn  # noqa: PLC0415 (only discovery needs torch)
    except BaseException as exc:  # noqa: BLE001
        out["errors"].append({"package": package, "module": "torch",
                              "detail": "discovery needs torch: " + _exc_text(exc)})
        return
    rx = re.compile(match)
    try:
        pkg = importlib.import_module(package)
    except BaseException as exc:  # noqa: BLE001
        out["errors"].append({"package": package, "module": package, "detail": _exc_text(exc)})
        return
    names = {package}
    if hasattr(pkg, "__path__"):
        def onerror(name):
            out["errors"].append({"package": package, "module": name,
                                  "detail": _exc_text(sys.exc_info()[1])})
        for info in pkgutil.walk_packages(pkg.__path__, package + ".", onerror=onerror):
            names.add(info.name)
    for name in sorted(names):
        if name == main_module or name.endswith(".__main__"):
            if name == main_module:
                _entry_module_classes(name, rx, out)
            continue  # never import what runs as __main__: it would start the workload
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001
            out["errors"].append({"package": package, "module": name, "detail": _exc_text(exc)})
            continue
        for attr in sorted(vars(module)):
            cls = getattr(module, attr)
            if not (inspect.isclass(cls) and cls.__module__ == name and rx.search(cls.__name__)):
                continue
            if not issubclass(cls, torch.nn.Module):
                continue
            if getattr(cls, "forward", None) is getattr(torch.nn.Module, "forward", None):
                continue  # no forward of its own or inherited from a real module
            out["discovered"].append({"module": name, "function": f"{cls.__name__}.forward",
                                      "class": cls.__name__})


def main():
    request = json.load(sys.stdin)
    # Import like `python -m` / torchrun -m would: the working directory first on sys.path,
    # not this helper's own folder.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path.insert(0, os.getcwd())
    aliases = request.get("aliases") or {}
    if aliases:
        sys.meta_path.insert(0, _AliasFinder(aliases))
    out = {"schema": "cpprof.validate_trace/1", "python": sys.executable,
           "python_version": platform.python_version(), "main_module": None, "entries": [],
           "discovered": [], "entry_module_classes": [], "errors": []}
    real_stdout = sys.stdout
    # What imported modules print goes to stderr, so stdout carries only the answer.
    with contextlib.redirect_stdout(sys.stderr):
        main_module = main_module_of(request.get("entry_module"))
        out["main_module"] = main_module
        for entry in request.get("entries", []):
            out["entries"].append(check_entry(entry["module"], entry["function"], main_module))
        for d in request.get("discover", []):
            discover(d["package"], d["match"], main_module, out)
    json.dump(out, real_stdout)
    real_stdout.write("\n")


if __name__ == "__main__":
    main()
