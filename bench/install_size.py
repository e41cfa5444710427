"""What a user's install weighs (issue 24, item 2): the default install and the ``[llm]`` extra, measured.

    python bench/install_size.py                   # this checkout: default and [llm]
    python bench/install_size.py --source DIR      # another checkout (e.g. an older one, to compare)
    python bench/install_size.py --installs default

Builds the wheel of the checkout (``pip wheel --no-deps``, build isolation: the ``[build-system]`` of its
pyproject.toml builds it), then for each install creates a fresh virtualenv in a temporary folder, installs the
wheel (``<wheel>`` or ``<wheel>[llm]``) with pip from the configured index, and prints:

* packages: the distributions installed besides those of an empty virtualenv (pip);
* size: the bytes of the files they added to site-packages (byte-compiled as pip leaves them), in MB (10^6 bytes),
  and the ``bin/`` scripts;
* seconds the ``pip install`` took (network and the index's cache make this one noisy).

Not part of ``make bench`` (it installs from the package index, ~1–3 minutes); the virtualenvs are deleted after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALLS = {"default": "", "llm": "[llm]"}


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel of the checkout ``source``, built into ``out``.  Exits with pip's output when the build fails."""
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        sys.exit(f"install_size: building the wheel of {source} failed:\n{done.stdout}{done.stderr}")
    [wheel] = out.glob("*.whl")
    return wheel


def _site_packages(venv: Path) -> Path:
    [site] = venv.glob("lib/python*/site-packages") or venv.glob("Lib/site-packages")
    return site


def _inventory(venv: Path) -> tuple[set[str], dict[str, int]]:
    """``(distributions, {file path: bytes})`` of the virtualenv's site-packages and scripts folder."""
    site = _site_packages(venv)
    dists = {p.name.split("-")[0].lower().replace("_", "-") for p in site.glob("*.dist-info")}
    sizes: dict[str, int] = {}
    for folder in (site, venv / "bin", venv / "Scripts"):
        if not folder.is_dir():
            continue
        for base, _, files in os.walk(folder):
            for name in files:
                path = os.path.join(base, name)
                if not os.path.islink(path):
                    sizes[path] = os.path.getsize(path)
    return dists, sizes


def measure(wheel: Path, extra: str, scratch: Path) -> dict:
    """Install ``wheel`` with ``extra`` into a fresh virtualenv under ``scratch``; packages, bytes and seconds it
    added to an empty one.  Exits naming pip's last lines when the install fails."""
    venv = scratch / f"venv{extra.strip('[]') or '-default'}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    empty_dists, empty_sizes = _inventory(venv)
    start = time.perf_counter()
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}{extra}"], capture_output=True,
                          text=True, timeout=1800)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"install_size: pip install {wheel.name}{extra} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    dists, sizes = _inventory(venv)
    added = sum(size for path, size in sizes.items() if path not in empty_sizes)
    result = {"install": extra or "default", "packages": len(dists - empty_dists), "bytes": added,
              "seconds": seconds}
    shutil.rmtree(venv, ignore_errors=True)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=ROOT, help="checkout to build (default: this one)")
    parser.add_argument("--installs", default="default,llm", help="comma-separated: default, llm")
    args = parser.parse_args(argv)
    wanted = [name.strip() for name in args.installs.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in INSTALLS]
    if unknown:
        parser.error(f"unknown install(s) {', '.join(unknown)}: choose from {', '.join(INSTALLS)}")
    with tempfile.TemporaryDirectory(prefix="duck-tape-install-size-") as scratch:
        wheel = build_wheel(args.source.resolve(), Path(scratch) / "dist")
        print(f"{wheel.name} ({wheel.stat().st_size / 1e6:.2f} MB), Python {sys.version.split()[0]}")
        print(f"{'install':<10} {'packages':>8} {'size':>10} {'pip install':>12}")
        for name in wanted:
            r = measure(wheel, INSTALLS[name], Path(scratch))
            print(f"{r['install']:<10} {r['packages']:>8} {r['bytes'] / 1e6:>7.1f} MB {r['seconds']:>10.1f} s",
                  flush=True)


if __name__ == "__main__":
    main()
