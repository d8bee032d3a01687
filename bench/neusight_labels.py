"""NeuSight's published run records, as bench/neusight-e2e.py and
bench/neusight-nodes.py read them.

NeuSight's repository (github.com/sitar-lab/NeuSight, MIT) keeps one JSON
file a whole-model run and, for most runs, the per-op profile of one layer
beside it: scripts/asplos/label/<GPU>/<model>-<inf|train>-<seq>-<batch>
[-fusion].{json,csv}.  Python 3 standard library only.
"""

import argparse
import os
import re
import subprocess

# NeuSight's GPU directory names and the arch names gpusim gives them.
GPUS = {
    "NVIDIA_A100-PCIE-40GB": "a100-pcie-40gb",
    "NVIDIA_A100_80GB_PCIe": "a100-pcie-80gb",
    "NVIDIA_H100_80GB_HBM3": "h100-sxm5-80gb",
    "NVIDIA_L4": "l4",
    "Tesla_T4": "t4",
    "Tesla_V100-PCIE-32GB": "v100-pcie-32gb",
}
LABELS = "scripts/asplos/label"
# A per-op profile's row of layer 0 (its nn_module_stack names the layer).
LAYER0 = re.compile(r"\.(h|layer|layers|block)\.0[.'\]]")


class Checkout:
    """Reads files of a NeuSight clone, a work tree or a git directory."""

    def __init__(self, path):
        self.path = path
        self.tree = os.path.isdir(os.path.join(path, LABELS))

    def _git(self, *args):
        return subprocess.run(["git", "--git-dir", self._gitdir()] + list(args),
                              check=True, capture_output=True,
                              text=True).stdout

    def _gitdir(self):
        dot = os.path.join(self.path, ".git")
        return dot if os.path.isdir(dot) else self.path

    def list(self, gpu):
        if self.tree:
            d = os.path.join(self.path, LABELS, gpu)
            return sorted(os.listdir(d)) if os.path.isdir(d) else []
        out = self._git("ls-tree", "--name-only", "HEAD", f"{LABELS}/{gpu}/")
        return sorted(os.path.basename(p) for p in out.split())

    def read(self, gpu, name):
        return self.read_path(f"{LABELS}/{gpu}/{name}")

    def read_path(self, rel):
        """A file of the checkout by its path in the repository."""
        if self.tree:
            with open(os.path.join(self.path, rel)) as f:
                return f.read()
        return self._git("show", f"HEAD:{rel}")

    def exists(self, rel):
        """Whether the checkout has a file at REL."""
        if self.tree:
            return os.path.isfile(os.path.join(self.path, rel))
        return subprocess.run(["git", "--git-dir", self._gitdir(), "cat-file",
                               "-e", f"HEAD:{rel}"],
                              capture_output=True).returncode == 0


# The six models' Hugging Face configs, as the project keeps them.
MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                          "data", "neusight", "models")


def files(src, archs, pattern, models):
    """(NeuSight GPU directory, gpusim arch, file name, match) of every
    label file of the GPUs in ARCHS (gpusim names; all six when empty)
    whose name PATTERN matches with a first group in MODELS."""
    for gpu, arch in GPUS.items():
        if archs and arch not in archs:
            continue
        for name in src.list(gpu):
            m = pattern.match(name)
            if m and m.group(1) in models:
                yield gpu, arch, name, m


def arguments(doc):
    """An argument parser with the options every NeuSight script takes:
    the checkout, --gpusim, --arch (repeatable) and --jobs."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("checkout", help="a clone of NeuSight's repository")
    ap.add_argument("--gpusim", default="./gpusim")
    ap.add_argument("--arch", action="append",
                    help="only these GPUs (gpusim names); repeatable")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    return ap
