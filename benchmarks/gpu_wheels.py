"""The wheels ``benchmarks/gpu_check.sh`` carries to a borrowed GPU machine, and the checks that they are enough.

The GPU machine (the device tool's ``nvidia-h100-x1`` / ``nvidia-h200``) runs its own image: Python 3.12, torch
2.11 (CUDA 13), transformers 5.17, accelerate, peft, tensorboard, pytest and about 200 more packages
(:data:`IMAGE`), with no network. What guigym needs beyond them, gymnasium and TRL with their small dependencies
(:data:`WHEELS`), travels as wheels in one folder (:data:`WHEELS_DIR`, ignored by git; the device tool carries it
with ``carry``), within the 64 MiB that the working tree and carried paths may take together.

Here (Python 3.11+, with PyPI)::

    python benchmarks/gpu_wheels.py download   # the wheels for CPython 3.12 manylinux x86_64, then closure + size

``download`` fetches exactly :data:`WHEELS` (``pip download --no-deps --only-binary=:all:``) for the GPU image and,
where a wheel is built per Python version (multiprocess), for this interpreter too, so that the CPU dry run installs
from the same folder; it drops any other wheel (two versions of one package stop ``pip install``), then checks:

* ``closure``: every requirement of each wheel, and of guigym itself (``pyproject.toml``: the core dependencies
  and the ``train``, ``trl`` and ``vlm`` extras), names a package that is carried or in the image; where the image's
  version is recorded (:data:`IMAGE_VERSIONS`), the requirement's version range holds it. A package missing from
  both fails; a range over an image package whose version is not recorded is listed as not verified.
* ``size``: the working tree (git's tracked and untracked-not-ignored files) plus the folder, in MiB, fails
  over 64 MiB.

On the GPU machine and in the dry run (``gpu_check.sh``), with ``T`` a fresh empty folder::

    python benchmarks/gpu_wheels.py install T   # pip install --no-index --no-deps --find-links WHEELS_DIR --target T
    PYTHONPATH=T:. python benchmarks/gpu_wheels.py check T

For the CPU dry run, ``image-site DIR`` links into ``DIR`` the packages of this interpreter that the GPU image
also has (:data:`IMAGE`), with what their versions here require (a newer huggingface-hub here needs httpcore2),
and nothing else; ``gpu_check.sh --cpu-dry-run`` runs Python with ``-S`` (no site-packages) and ``DIR`` on
``PYTHONPATH``, so a module that only this machine has (wandb, pydantic, ...) is as absent as on the GPU machine,
and optional imports take the path they take there. Versions are this machine's, not the image's: the
floor-version run (``benchmarks/floor_check.sh``) covers those.

``check`` holds the carried wheels' requirements against what the running interpreter has installed (missing:
fails, before any import; out of range: a warning line), imports the modules the GPU check runs
(:data:`CHECK_MODULES`), and prints where torch, transformers, accelerate, TRL, datasets and gymnasium were
loaded from and how many modules came from guigym and from the carried wheels.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata as md
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The folder of carried wheels (relative to the repository root; ``.gitignore`` lists it).
WHEELS_DIR = ".gpu-wheels"
#: What may travel with a device call: the working tree and the carried paths together, bytes.
TRAVEL_LIMIT = 64 * 2**20
#: The carried wheels, pinned: the versions guigym's own tests run (the CI environment) and the floor-version
#: run (``benchmarks/floor_check.sh``) installs. trl 1.16 needs datasets >= 4.7; datasets needs dill and
#: multiprocess; gymnasium needs farama-notifications. Everything else they need is in the image.
WHEELS = (
    "gymnasium==1.4.0",
    "farama-notifications==0.0.6",
    "trl==1.16.0",
    "datasets==5.2.0",
    "dill==0.4.1",
    "multiprocess==0.70.19",
)
#: The wheels' target: the GPU image's interpreter (Python 3.12.3, x86-64 Linux, glibc manylinux).
PYTHON_VERSION = "3.12"
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
)
#: The environment markers of that interpreter, for the wheels' conditional requirements.
MARKERS = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
           "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
           "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}  # fmt: skip
#: The GPU image's packages (/work/.library/device/KINDS.md, "Python packages already there", read on a machine
#: running it on 2026-11-17).
IMAGE = frozenset(
    """
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build certifi
charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core cuda-pathfinder
cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock flatbuffers flax fonttools
formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx huggingface-hub humanize hypothesis idna
imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver
lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml markdown markdown-it-py markupsafe
matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch mypy-extensions nanobind narwhals
networkx ninja numba numba-cuda numpy numpyro nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime
nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13
nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript
opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec patsy
peft pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11 py-cpuinfo pygments
pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock pytest-timeout
pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors scikit-build-core
scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham simplejson six
sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore threadpoolctl tifffile
tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics torchvision tqdm
transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig werkzeug wheel
wrapt xarray xxhash yarl zipp
""".split()
)
#: The image's versions where KINDS.md records them (a session's ``pip list`` there, 2026-11).
IMAGE_VERSIONS = {"accelerate": "1.15.0", "huggingface-hub": "1.33.0", "numpy": "2.5.2", "safetensors": "0.8.0",
                  "sentencepiece": "0.2.2", "tiktoken": "0.14.0", "tokenizers": "0.23.2", "torch": "2.11.0",
                  "torchvision": "0.26.0", "transformers": "5.17.0", "triton": "3.6.0"}  # fmt: skip
#: guigym's extras that the GPU check imports (besides the core dependencies).
EXTRAS = ("train", "trl", "vlm")
#: Modules the GPU check loads; ``check`` imports them and traces every loaded module to its distribution.
CHECK_MODULES = ("gymnasium", "datasets", "trl", "gui_envs", "agents.hf_agent", "agents.tiny_models",
                 "trainers.grpo", "trainers.memory_plan", "trainers.trl.train", "trainers.trl.tiny",
                 "transformers.models.qwen2_5_vl.modeling_qwen2_5_vl", "transformers.models.qwen2.modeling_qwen2",
                 "transformers.models.qwen2_vl.image_processing_pil_qwen2_vl")  # fmt: skip


def canonical(name: str) -> str:
    """A distribution name in PEP 503 form (``Farama_Notifications`` -> ``farama-notifications``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned() -> dict[str, str]:
    """:data:`WHEELS` as ``{canonical name: version}``."""
    return {canonical(p.split("==")[0]): p.split("==")[1] for p in WHEELS}


def wheel_metadata(path: Path) -> tuple[str, str, list[str]]:
    """``(name, version, Requires-Dist lines)`` of a wheel file."""
    with zipfile.ZipFile(path) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1]
        text = z.read(meta).decode()
    head = dict(line.split(": ", 1) for line in text.split("\n\n")[0].splitlines() if ": " in line)
    requires = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("Requires-Dist: ")]
    return canonical(head["Name"]), head["Version"], requires


def active(requirement: str) -> object | None:
    """The requirement as a ``packaging`` ``Requirement`` when it applies on the GPU image without extras."""
    from packaging.requirements import Requirement

    req = Requirement(requirement)
    if req.marker is not None and not req.marker.evaluate(MARKERS):
        return None
    return req


def guigym_requirements() -> list[str]:
    """guigym's core dependencies and those of :data:`EXTRAS` (self-references such as ``guigym[train]`` left
    out), from ``pyproject.toml``."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in EXTRAS:
        reqs += [r for r in project["optional-dependencies"][extra] if not r.startswith("guigym")]
    return reqs


def closure(folder: Path) -> list[str]:
    """Check that the wheels in ``folder`` plus the image satisfy the wheels and guigym (see the module
    docstring); returns the lines to print, raising ``SystemExit`` on a missing package or a wrong version."""
    carried = {}
    needs: list[tuple[str, str]] = [("guigym", r) for r in guigym_requirements()]
    for path in sorted(folder.glob("*.whl")):
        name, version, requires = wheel_metadata(path)
        carried[name] = version
        needs += [(f"{name} {version}", r) for r in requires]
    missing = [p for p in pinned() if p not in carried]
    errors = [f"{p} is pinned but its wheel is not in {folder}" for p in missing]
    unverified = []
    for who, line in needs:
        req = active(line)
        if req is None:
            continue
        name = canonical(req.name)  # type: ignore[attr-defined]
        have = carried.get(name) or IMAGE_VERSIONS.get(name)
        if name not in carried and name not in IMAGE:
            errors.append(f"{who} needs {line}: neither carried nor in the image; add it to WHEELS")
        elif have is None:
            if str(req.specifier):  # type: ignore[attr-defined]
                unverified.append(f"{name}{req.specifier} (for {who})")  # type: ignore[attr-defined]
        elif not req.specifier.contains(have, prereleases=True):  # type: ignore[attr-defined]
            where = "carried" if name in carried else "in the image"
            errors.append(f"{who} needs {line}, but {name} {have} is {where}")
    if errors:
        raise SystemExit("gpu_wheels closure: " + "; ".join(errors))
    lines = [f"closure: {len(carried)} wheels carried ({', '.join(f'{k} {v}' for k, v in sorted(carried.items()))}); "
             f"every requirement of theirs and guigym's is carried or in the image"]  # fmt: skip
    if unverified:
        lines.append(
            "not verified (the image's version is not recorded): " + ", ".join(sorted(set(unverified)))
        )
    return lines


def travel_bytes(folder: Path) -> tuple[int, int]:
    """``(working tree, folder)`` bytes: git's tracked and untracked-not-ignored files, and the folder's files."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")  # fmt: skip
    tree = sum((ROOT / f).stat().st_size for f in listed if f and (ROOT / f).is_file())
    wheels = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return tree, wheels


def size(folder: Path) -> str:
    """The line on what travels; raises ``SystemExit`` over :data:`TRAVEL_LIMIT`."""
    tree, wheels = travel_bytes(folder)
    line = (f"size: working tree {tree / 2**20:.2f} MiB + wheels {wheels / 2**20:.2f} MiB = "
            f"{(tree + wheels) / 2**20:.2f} MiB of the {TRAVEL_LIMIT / 2**20:.0f} MiB a device call carries")  # fmt: skip
    if tree + wheels > TRAVEL_LIMIT:
        raise SystemExit(f"gpu_wheels {line}: over the limit")
    return line


def download(folder: Path) -> list[str]:
    """Fetch :data:`WHEELS` into ``folder`` (no network when they are all there already), remove other wheels,
    then :func:`closure` and :func:`size`."""
    folder.mkdir(parents=True, exist_ok=True)
    want = pinned()
    # ((name, version), python tag) of each wheel there: "py3" for pure ones, "py312" / "cp312" for others.
    have = {(wheel_metadata(p)[:2], p.name.split("-")[-3]) for p in folder.glob("*.whl")}

    def present(item: tuple[str, str], version: str) -> bool:
        return any(nv == item and tag in ("py3", f"py{version}", f"cp{version}") for nv, tag in have)

    gpu, here = PYTHON_VERSION.replace(".", ""), f"{sys.version_info.major}{sys.version_info.minor}"
    if not all(present(item, gpu) and present(item, here) for item in want.items()):
        platforms = [a for p in PLATFORMS for a in ("--platform", p)]
        common = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                  "--dest", str(folder), *WHEELS]  # fmt: skip
        subprocess.run([*common, "--python-version", PYTHON_VERSION, "--implementation", "cp", *platforms],
                       check=True)  # fmt: skip
        subprocess.run(
            common, check=True
        )  # this interpreter's own (the dry run's): pure wheels are already there
    for path in folder.glob("*.whl"):
        name, version, _ = wheel_metadata(path)
        if want.get(name) != version:
            path.unlink()  # another version, or a package no longer carried
    return [*closure(folder), size(folder)]


def install(target: Path, folder: Path) -> list[str]:
    """``pip install`` the pinned wheels from ``folder`` into ``target`` (which must be empty), with no index and
    no dependency resolution (the image provides the rest: :func:`closure`)."""
    target.mkdir(parents=True, exist_ok=True)
    if any(target.iterdir()):
        raise SystemExit(f"gpu_wheels install: {target} is not empty; give a fresh folder")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile",
                    "--no-cache-dir", "--find-links", str(folder), "--target", str(target), *WHEELS],
                   check=True)  # fmt: skip
    return [f"{len(WHEELS)} packages from {folder} into {target}, no index"]


def image_site(dest: Path) -> list[str]:
    """Symbolic links in ``dest`` to the top-level modules and metadata of this interpreter's distributions that
    are in :data:`IMAGE` (the dry run's stand-in for the GPU image's site-packages); returns the lines to print."""
    from packaging.requirements import Requirement

    dest.mkdir(parents=True, exist_ok=True)
    here = {}
    for dist in md.distributions():
        here.setdefault(canonical(dist.metadata["Name"]), dist)
    # The image's packages found here, closed under what their versions here require (no extras).
    todo, seen = [n for n in IMAGE if n in here], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in here[name].requires or []:
            req = Requirement(line)
            if (req.marker is None or req.marker.evaluate({"extra": ""})) and canonical(req.name) in here:
                todo.append(canonical(req.name))
    linked = 0
    for name in sorted(seen):
        dist = here[name]
        for top in {Path(str(f)).parts[0] for f in dist.files or []}:
            source = Path(str(dist.locate_file(top)))
            if top == ".." or not source.exists() or (dest / top).exists():
                continue  # a script outside site-packages, or a namespace folder another distribution linked
            (dest / top).symlink_to(source)
            linked += 1
    found = len(seen & IMAGE)
    return [
        f"{found} of the image's {len(IMAGE)} packages found here, with {len(seen) - found} that their versions "
        f"here require: {linked} entries linked into {dest}"
    ]


def check(target: Path) -> list[str]:
    """On the GPU machine (or in the dry run): the carried wheels' requirements against this interpreter, then
    the check's modules traced to their distributions (see the module docstring)."""
    from packaging.version import InvalidVersion, Version

    lines, errors = [], []
    carried = {canonical(d.metadata["Name"]): d for d in md.distributions(path=[str(target)])}
    for name in pinned():
        if name not in carried:
            errors.append(f"{name} is not installed in {target}")
    for dist in carried.values():
        for line in dist.requires or []:
            req = active(line)
            if req is None:
                continue
            try:
                version = md.version(req.name)  # type: ignore[attr-defined]
            except md.PackageNotFoundError:
                errors.append(f"{dist.metadata['Name']} needs {line}: not installed here")
                continue
            try:
                ok = req.specifier.contains(Version(version), prereleases=True)  # type: ignore[attr-defined]
            except InvalidVersion:
                ok = False
            if not ok:
                lines.append(f"warning: {dist.metadata['Name']} asks for {line}; this machine has {version}")
    if errors:  # before the imports: a missing package named, not a traceback
        raise SystemExit("gpu_wheels check: " + "; ".join(errors))
    for module in CHECK_MODULES:
        importlib.import_module(module)
    from trl import GRPOConfig, GRPOTrainer  # noqa: F401  (trl's lazy top level: the trainer's own imports)

    for name in ("torch", "transformers", "accelerate", "trl", "datasets", "gymnasium"):
        lines.append(f"{name} {md.version(name)} from {Path(sys.modules[name].__file__ or '').parent}")
    files = [
        str(Path(m.__file__).resolve()) for m in list(sys.modules.values()) if getattr(m, "__file__", None)
    ]
    own, wheels = str(ROOT), str(target.resolve())
    n_own = sum(f.startswith(own) and not f.startswith(wheels) for f in files)
    n_wheels = sum(f.startswith(wheels) for f in files)
    where = (
        "this interpreter's site-packages off (-S): the rest from the image stand-in or the standard library"
    )
    if not sys.flags.no_site:
        where = "the rest from this interpreter's own packages"
    lines.append(
        f"imports: {len(files)} modules from files: {n_own} guigym, {n_wheels} carried wheels, {where}"
    )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("image-site")
    p.add_argument("dest", help="an empty folder for the links")
    for name in ("download", "closure", "size"):
        p = sub.add_parser(name)
        p.add_argument("--dir", default=str(ROOT / WHEELS_DIR), help="the wheel folder")
    p = sub.add_parser("install")
    p.add_argument("target", help="an empty folder for pip's --target")
    p.add_argument("--dir", default=str(ROOT / WHEELS_DIR), help="the wheel folder")
    p = sub.add_parser("check")
    p.add_argument("target", help="the folder pip installed the wheels into (--target)")
    args = parser.parse_args(argv)
    if args.command == "check":
        lines = check(Path(args.target))
    elif args.command == "image-site":
        lines = image_site(Path(args.dest))
    elif args.command == "install":
        lines = install(Path(args.target), Path(args.dir))
    else:
        folder = Path(args.dir)
        lines = {"download": download, "closure": closure, "size": lambda f: [size(f)]}[args.command](folder)
    for line in lines:
        # closure's and size's own lines start with their names (download prints both kinds)
        print(f"gpu_wheels {line}" if line.startswith(f"{args.command}:") else f"gpu_wheels {args.command}: {line}")


if __name__ == "__main__":
    main()
