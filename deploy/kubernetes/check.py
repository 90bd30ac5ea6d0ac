#!/usr/bin/env python3
"""Checks the Kubernetes manifests under deploy/kubernetes.

Needs Python 3.11 and the packages of requirements.txt beside this file:

    kubernetes-validate==1.37.0
    PyYAML==6.0.3

    python3 -m venv /tmp/kv && /tmp/kv/bin/pip install -r deploy/kubernetes/requirements.txt
    /tmp/kv/bin/python deploy/kubernetes/check.py \
        --controller target/release/vigil-controller --agent target/release-agent/vigil-agent

What it checks:

1. Every YAML document of every manifest file (not kustomization.yaml, not the patches a
   kustomization names) against the Kubernetes schemas of KUBERNETES_VERSION, strictly:
   an unknown field is an error. Every YAML file must be a resource or a patch of some
   kustomization.yaml, and every TOML file (the agent's settings) must parse.
2. With kubectl (or kustomize) on PATH: each kustomization rendered, its documents
   validated the same way, and what the API server would refuse or the cluster could not
   resolve: references to Secrets, ConfigMaps, volume claims and service accounts that the
   rendering does not contain (vigil-agent-join and vigil-controller-secrets excepted:
   they are made by hand),
   allowPrivilegeEscalation false with CAP_SYS_ADMIN or privileged, and Vigil images whose
   tag is not the workspace version (Cargo.toml). Without either tool this step is skipped
   with a note.
3. With --controller and --agent: every flag (`--name` in a container's command or args)
   and every VIGIL_* environment variable the manifests give a vigil-controller or
   vigil-agent container exists in `vigil-controller serve --help` or `vigil-agent run
   --help` (clap prints a flag's variable as `[env: NAME=…]`, or `[env: NAME]` when its
   value is hidden). RUST_LOG is always allowed. Without the binaries this step is skipped
   with a note.

--no-skip turns each skip into a failure (for CI). Exits 0 when nothing is wrong, 1 with
the list of problems, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

# The Kubernetes release whose schemas the manifests must satisfy: the oldest the manifests
# support (appArmorProfile needs 1.30). kubernetes-validate 1.37.0 ships 1.25 to 1.37.
KUBERNETES_VERSION = "1.31.0"

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# The binaries whose containers step 3 checks, and the subcommand each runs by default
# (the images' CMD).
VIGIL_BINARIES = {"vigil-controller": "serve", "vigil-agent": "run"}
# Allowed whatever the help says.
ALWAYS_KNOWN_ENV = {"RUST_LOG"}
# Objects the manifests name but that an operator makes by hand (README.md).
EXTERNAL_OBJECTS = {("Secret", "vigil-agent-join"), ("Secret", "vigil-controller-secrets")}

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
HELP_FLAG = re.compile(r"(?<![\w-])(--[A-Za-z0-9][A-Za-z0-9-]*)")
HELP_ENV = re.compile(r"\[env: ([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0
    documents: int = 0
    rendered: list[str] = field(default_factory=list)
    rendered_documents: int = 0
    flags: set[str] = field(default_factory=set)
    env: set[str] = field(default_factory=set)

    def problem(self, text: str) -> None:
        self.problems.append(text)


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


# --- 1. The files ---------------------------------------------------------------------


@dataclass
class Layout:
    kustomizations: list[Path]
    resources: set[Path]
    patches: set[Path]


def read_kustomizations(report: Report) -> Layout:
    layout = Layout([], set(), set())
    for path in sorted(HERE.rglob("*")):
        if path.name not in KUSTOMIZATION_NAMES:
            continue
        layout.kustomizations.append(path.parent)
        try:
            spec = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as error:
            report.problem(f"{rel(path)}: not YAML: {error}")
            continue
        for entry in spec.get("resources") or []:
            target = (path.parent / entry).resolve()
            if target.is_file():
                layout.resources.add(target)
        for entry in spec.get("patches") or []:
            if isinstance(entry, dict) and entry.get("path"):
                layout.patches.add((path.parent / entry["path"]).resolve())
        for entry in spec.get("patchesStrategicMerge") or []:
            if isinstance(entry, str) and "\n" not in entry:
                layout.patches.add((path.parent / entry).resolve())
    return layout


def documents(text: str, origin: str, report: Report) -> list[dict[str, Any]]:
    try:
        loaded = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        report.problem(f"{origin}: not YAML: {error}")
        return []
    docs = []
    for index, doc in enumerate(loaded):
        if doc is None:
            continue
        if not isinstance(doc, dict) or not doc.get("kind") or not doc.get("apiVersion"):
            report.problem(f"{origin}: document {index + 1} is not a Kubernetes object")
            continue
        docs.append(doc)
    return docs


def name_of(doc: dict[str, Any]) -> str:
    return f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name', '?')}"


def validate(doc: dict[str, Any], origin: str, versions: list[str], report: Report) -> None:
    for version in versions:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            where = ".".join(str(p) for p in error.path) or "(top)"
            report.problem(
                f"{origin}: {name_of(doc)} is not valid for Kubernetes {version}: "
                f"{where}: {error.message}"
            )
        except kubernetes_validate.SchemaNotFoundError as error:
            report.problem(f"{origin}: {name_of(doc)}: {error.message}")
        except kubernetes_validate.InvalidSchemaError as error:
            report.problem(f"{origin}: {name_of(doc)}: {error.message}")


def check_files(layout: Layout, versions: list[str], report: Report) -> list[tuple[Path, dict]]:
    """Validates the manifest files; returns every document, patches included, by file."""
    found: list[tuple[Path, dict]] = []
    for path in sorted(HERE.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix == ".toml":
            try:
                tomllib.loads(path.read_text())
            except tomllib.TOMLDecodeError as error:
                report.problem(f"{rel(path)}: not TOML: {error}")
            continue
        if path.suffix not in (".yaml", ".yml") or path.name in KUSTOMIZATION_NAMES:
            continue
        resolved = path.resolve()
        patch = resolved in layout.patches
        if not patch and resolved not in layout.resources:
            report.problem(f"{rel(path)}: listed in no kustomization.yaml (resources or patches)")
        docs = documents(path.read_text(), rel(path), report)
        found.extend((path, doc) for doc in docs)
        if patch:
            continue  # a partial object: checked once rendered
        report.files += 1
        for doc in docs:
            report.documents += 1
            validate(doc, rel(path), versions, report)
    return found


# --- 2. The rendered kustomizations ---------------------------------------------------


def renderer() -> list[str] | None:
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    return None


def render(command: list[str], directory: Path, report: Report) -> list[dict] | None:
    try:
        done = subprocess.run(
            [*command, str(directory)], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        report.problem(f"{rel(directory)}: {' '.join(command)} failed: {error}")
        return None
    if done.returncode != 0:
        report.problem(
            f"{rel(directory)}: {' '.join(command)} exited {done.returncode}: {done.stderr.strip()}"
        )
        return None
    return documents(done.stdout, f"{rel(directory)} (rendered)", report)


def pod_specs(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = doc.get("spec") or {}
    if doc.get("kind") == "Pod":
        yield spec
    elif doc.get("kind") == "CronJob":
        yield (
            (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")
            or {}
        )
    elif isinstance(spec.get("template"), dict):
        yield spec["template"].get("spec") or {}


def containers(pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in pod.get(key) or []:
            if isinstance(container, dict):
                yield container


def references(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The (kind, name) of every object a workload's pods need to exist."""
    for pod in pod_specs(doc):
        if pod.get("serviceAccountName"):
            yield "ServiceAccount", pod["serviceAccountName"]
        for volume in pod.get("volumes") or []:
            if (volume.get("secret") or {}).get("secretName") and not volume["secret"].get(
                "optional"
            ):
                yield "Secret", volume["secret"]["secretName"]
            if (volume.get("configMap") or {}).get("name") and not volume["configMap"].get(
                "optional"
            ):
                yield "ConfigMap", volume["configMap"]["name"]
            if (volume.get("persistentVolumeClaim") or {}).get("claimName"):
                yield "PersistentVolumeClaim", volume["persistentVolumeClaim"]["claimName"]
        for container in containers(pod):
            for env in container.get("env") or []:
                source = env.get("valueFrom") or {}
                for key, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
                    ref = source.get(key) or {}
                    if ref.get("name") and not ref.get("optional"):
                        yield kind, ref["name"]
            for env_from in container.get("envFrom") or []:
                for key, kind in (("secretRef", "Secret"), ("configMapRef", "ConfigMap")):
                    ref = env_from.get(key) or {}
                    if ref.get("name") and not ref.get("optional"):
                        yield kind, ref["name"]


def workspace_version() -> str | None:
    try:
        cargo = tomllib.loads((REPO / "Cargo.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return ((cargo.get("workspace") or {}).get("package") or {}).get("version")


def image_parts(image: str) -> tuple[str, str | None]:
    """The image's base name (no registry, no tag or digest) and its tag, if any."""
    without_digest = image.split("@", 1)[0]
    last = without_digest.rsplit("/", 1)[-1]
    name, _, tag = last.partition(":")
    return name, tag or None


def check_rendered(origin: str, docs: list[dict], version: str | None, report: Report) -> None:
    present = {(doc.get("kind"), (doc.get("metadata") or {}).get("name")) for doc in docs}
    for doc in docs:
        for kind, name in sorted(set(references(doc))):
            if (kind, name) not in present and (kind, name) not in EXTERNAL_OBJECTS:
                report.problem(f"{origin}: {name_of(doc)} needs {kind}/{name}, not rendered")
        for pod in pod_specs(doc):
            for container in containers(pod):
                where = f"{origin}: {name_of(doc)} container {container.get('name')}"
                check_container(where, container, version, report)


def check_container(where: str, container: dict, version: str | None, report: Report) -> None:
    """What the API server refuses but the schema allows, and the Vigil images' tags."""
    context = container.get("securityContext") or {}
    added = {
        str(c).upper().removeprefix("CAP_")
        for c in (context.get("capabilities") or {}).get("add") or []
    }
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged"):
            report.problem(f"{where}: allowPrivilegeEscalation false with privileged (refused)")
        if "SYS_ADMIN" in added:
            report.problem(
                f"{where}: allowPrivilegeEscalation false with SYS_ADMIN (refused when spelled "
                "CAP_SYS_ADMIN, and no_new_privs does not bind a holder of SYS_ADMIN)"
            )
    name, tag = image_parts(str(container.get("image", "")))
    if name in VIGIL_BINARIES and version and tag and tag != version:
        report.problem(
            f"{where}: image {container['image']} is not the workspace version {version}"
        )


# --- 3. Flags and environment variables -----------------------------------------------


@dataclass
class VigilContainer:
    origin: str
    binary: str
    subcommand: str
    flags: list[str]
    env: list[str]
    env_from: list[dict]


def subcommand_of(binary: str, container: dict[str, Any]) -> str:
    command = [str(c) for c in container.get("command") or []]
    args = [str(a) for a in container.get("args") or []]
    words = (command[1:] if command and Path(command[0]).name == binary else []) + args
    if command and Path(command[0]).name != binary:
        return VIGIL_BINARIES[binary]  # a wrapper: flags are still checked against the default
    for word in words:
        if not word.startswith("-"):
            return word
    return VIGIL_BINARIES[binary]


def vigil_containers(found: list[tuple[str, dict]]) -> list[VigilContainer]:
    """The vigil-controller and vigil-agent containers of `found` ((origin, document) pairs).
    A container without an image (in a patch) takes the image of the container with the same
    workload and name elsewhere in `found`."""
    images: dict[tuple, str] = {}
    for _, doc in found:
        for pod in pod_specs(doc):
            for container in containers(pod):
                if container.get("image"):
                    key = (
                        doc.get("kind"),
                        (doc.get("metadata") or {}).get("name"),
                        container.get("name"),
                    )
                    images.setdefault(key, str(container["image"]))
    out = []
    for origin, doc in found:
        for pod in pod_specs(doc):
            for container in containers(pod):
                key = (
                    doc.get("kind"),
                    (doc.get("metadata") or {}).get("name"),
                    container.get("name"),
                )
                image = str(container.get("image") or images.get(key, ""))
                binary, _ = image_parts(image)
                if binary not in VIGIL_BINARIES:
                    continue
                words = [
                    str(w) for w in (container.get("command") or []) + (container.get("args") or [])
                ]
                flags = [
                    w.split("=", 1)[0]
                    for w in words
                    if re.fullmatch(r"--[A-Za-z0-9][A-Za-z0-9-]*(=.*)?", w, re.S)
                ]
                env = [
                    str(e.get("name")) for e in container.get("env") or [] if isinstance(e, dict)
                ]
                out.append(
                    VigilContainer(
                        origin=f"{origin}: {name_of(doc)} container {container.get('name')}",
                        binary=binary,
                        subcommand=subcommand_of(binary, container),
                        flags=flags,
                        env=env,
                        env_from=list(container.get("envFrom") or []),
                    )
                )
    return out


def env_from_names(entry: dict, docs: list[dict]) -> list[str] | None:
    """The variable names an envFrom entry brings, from the ConfigMap or Secret in `docs`;
    None when that object is not there."""
    for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
        ref = entry.get(key)
        if not ref:
            continue
        for doc in docs:
            if doc.get("kind") == kind and (doc.get("metadata") or {}).get("name") == ref.get(
                "name"
            ):
                keys = [*(doc.get("data") or {}), *(doc.get("stringData") or {})]
                return [f"{entry.get('prefix', '')}{k}" for k in keys]
    return None


class HelpCache:
    def __init__(self, binaries: dict[str, Path], report: Report):
        self.binaries = binaries
        self.report = report
        self.cache: dict[tuple[str, str], tuple[set[str], set[str]] | None] = {}

    def get(self, binary: str, subcommand: str) -> tuple[set[str], set[str]] | None:
        key = (binary, subcommand)
        if key not in self.cache:
            self.cache[key] = self._read(binary, subcommand)
        return self.cache[key]

    def _read(self, binary: str, subcommand: str) -> tuple[set[str], set[str]] | None:
        path = self.binaries[binary]
        # The help shows a variable's current value: run it without Vigil's settings.
        environment = {k: v for k, v in os.environ.items() if not k.startswith("VIGIL_")}
        environment["NO_COLOR"] = "1"
        try:
            done = subprocess.run(
                [str(path), subcommand, "--help"],
                capture_output=True,
                text=True,
                timeout=30,
                env=environment,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            self.report.problem(f"{path} {subcommand} --help failed: {error}")
            return None
        if done.returncode != 0:
            self.report.problem(
                f"{path} {subcommand} --help exited {done.returncode}: {done.stderr.strip()[:300]}"
            )
            return None
        text = " ".join(ANSI.sub("", done.stdout).split())
        flags = set(HELP_FLAG.findall(text))
        env = set(HELP_ENV.findall(text))
        if not flags or not env:
            self.report.problem(
                f"{path} {subcommand} --help shows no flags or no [env: …] variables: "
                "is it the right binary?"
            )
            return None
        return flags, env


def check_flags_and_env(
    found: list[tuple[str, dict]], rendered: list[dict], helps: HelpCache, report: Report
) -> None:
    for vc in vigil_containers(found):
        if vc.binary not in helps.binaries:
            continue  # noted in main
        known = helps.get(vc.binary, vc.subcommand)
        if known is None:
            continue
        flags, env = known
        for flag in vc.flags:
            report.flags.add(f"{vc.binary} {flag}")
            if flag not in flags:
                report.problem(f"{vc.origin}: {vc.binary} {vc.subcommand} has no flag {flag}")
        names = list(vc.env)
        for entry in vc.env_from:
            from_names = env_from_names(entry, rendered)
            if from_names is None:
                report.notes.append(
                    f"{vc.origin}: an envFrom source outside the rendering was not checked"
                )
            else:
                names.extend(from_names)
        for name in names:
            if not name.startswith("VIGIL_") and name not in ALWAYS_KNOWN_ENV:
                continue
            report.env.add(f"{vc.binary} {name}")
            if name not in env and name not in ALWAYS_KNOWN_ENV:
                report.problem(
                    f"{vc.origin}: {name} is not an environment variable of "
                    f"{vc.binary} {vc.subcommand} (no [env: {name}] in its --help)"
                )


# --- main -----------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "--controller", type=Path, metavar="BIN", help="the vigil-controller binary"
    )
    parser.add_argument("--agent", type=Path, metavar="BIN", help="the vigil-agent binary")
    parser.add_argument(
        "--kubernetes-version",
        action="append",
        metavar="X.Y.Z",
        help=f"validate against this release (repeatable; default {KUBERNETES_VERSION})",
    )
    parser.add_argument(
        "--no-skip",
        action="store_true",
        help="fail instead of skipping a step (no kubectl, no binaries)",
    )
    args = parser.parse_args()
    versions = args.kubernetes_version or [KUBERNETES_VERSION]
    for version in versions:
        try:
            kubernetes_validate.validate(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}, version
            )
        except kubernetes_validate.utils.VersionNotSupportedError:
            have = kubernetes_validate.__version__
            parser.error(f"kubernetes-validate {have} has no schemas for {version}")
    binaries = {}
    for binary, path in (("vigil-controller", args.controller), ("vigil-agent", args.agent)):
        if path is None:
            continue
        if not (path.is_file() and os.access(path, os.X_OK)):
            parser.error(f"{path} is not an executable file")
        binaries[binary] = path

    report = Report()
    layout = read_kustomizations(report)
    found = [(rel(path), doc) for path, doc in check_files(layout, versions, report)]

    # 2. Render each kustomization.
    rendered_all: list[dict] = []
    command = renderer()
    if command is None:
        report.notes.append("rendering skipped: neither kubectl nor kustomize is on PATH")
    else:
        version = workspace_version()
        for directory in layout.kustomizations:
            docs = render(command, directory, report)
            if docs is None:
                continue
            origin = f"{rel(directory)} (rendered)"
            report.rendered.append(rel(directory))
            report.rendered_documents += len(docs)
            for doc in docs:
                validate(doc, origin, versions, report)
            check_rendered(origin, docs, version, report)
            found.extend((origin, doc) for doc in docs)
            rendered_all.extend(docs)

    # 3. Flags and variables, in the files and in what was rendered.
    wanted = {vc.binary for vc in vigil_containers(found)}
    missing = sorted(wanted - set(binaries))
    if missing:
        report.notes.append(
            "flags and environment variables not checked for "
            + ", ".join(missing)
            + " (give --controller and --agent)"
        )
    if binaries:
        check_flags_and_env(found, rendered_all, HelpCache(binaries, report), report)

    if args.no_skip and report.notes:
        for note in report.notes:
            report.problem(f"skipped with --no-skip: {note}")
        report.notes.clear()

    for note in report.notes:
        print(f"note: {note}")
    for problem in report.problems:
        print(f"problem: {problem}")
    rendered = (
        f"rendered {len(report.rendered)} kustomizations ({report.rendered_documents} documents)"
        if report.rendered
        else "rendered nothing"
    )
    print(
        f"check.py: {report.files} manifest files ({report.documents} documents) validated against "
        f"Kubernetes {', '.join(versions)} (strict); {rendered}; {len(report.flags)} flags and "
        f"{len(report.env)} environment variables of Vigil containers checked; "
        f"{len(report.problems)} problems"
    )
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
