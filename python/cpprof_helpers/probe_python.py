# Copyright 2026 cpprof developers
# SPDX-License-Identifier: Apache-2.0
"""What `cpprof doctor` needs to know about the Python that will run the workload.

Run with that Python; prints one JSON object on stdout (schema cpprof.probe_python/1). Standard
library only, except that torch is imported (inside a try) to read its versions.
"""
import importlib.util
import json
import os
import platform
import shutil
import site
import sys


def _torch():
    info = {"importable": False}
    try:
        import torch  # noqa: PLC0415 (optional dependency)
    except BaseException as exc:  # an ImportError, or a broken install raising anything
        info["error"] = f"{type(exc).__name__}: {exc}"
        return info
    info["importable"] = True
    info["version"] = str(torch.__version__)
    info["cuda"] = getattr(torch.version, "cuda", None)
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
    except BaseException:  # noqa: BLE001
        info["cuda_available"] = False
    try:
        nccl = torch.cuda.nccl.version()
        info["nccl"] = ".".join(str(p) for p in nccl) if isinstance(nccl, tuple) else str(nccl)
    except BaseException:  # noqa: BLE001 (a CPU-only build has no NCCL)
        info["nccl"] = None
    return info


def main():
    with open(os.devnull, "w") as devnull:
        real_stdout, sys.stdout = sys.stdout, devnull  # imports must not print into our JSON
        try:
            torch = _torch()
        finally:
            sys.stdout = real_stdout
    sites = []
    try:
        sites.extend(site.getsitepackages())
    except AttributeError:  # virtualenv's old site.py
        pass
    user_site = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
    if user_site:
        sites.append(user_site)
    bin_dir = os.path.dirname(sys.executable)
    torchrun = os.path.join(bin_dir, "torchrun")
    if not os.access(torchrun, os.X_OK):
        torchrun = shutil.which("torchrun")
    out = {
        "schema": "cpprof.probe_python/1",
        "executable": sys.executable,
        "version": platform.python_version(),
        "prefix": sys.prefix,
        "site_packages": [s for s in sites if os.path.isdir(s)],
        "torch": torch,
        "nvtx_importable": importlib.util.find_spec("nvtx") is not None,
        "torchrun": torchrun,
    }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
