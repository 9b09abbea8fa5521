"""A `kustomize build` stand-in for the features k8s/ uses, so overlays are checked offline.

Handles resources (files and directories), configMapGenerator (literals, `behavior: merge`,
a content-hash name suffix with references rewritten), strategic-merge (`$patch: delete`
too) and JSON6902 patches,
`namespace`, `images`, `replicas` and `labels` (metadata only). Anything else in a
kustomization is refused, so a new feature can't silently go unrendered.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

Doc = dict[str, Any]
SUPPORTED = {"apiVersion", "kind", "resources", "configMapGenerator", "patches", "namespace",
             "images", "replicas", "labels"}
CLUSTER_SCOPED = {"Namespace", "PersistentVolume", "ClusterRole", "ClusterRoleBinding",
                  "StorageClass", "CustomResourceDefinition"}
GENERATED = "kustomize.test/generated"


class KustomizeError(ValueError):
    """A kustomization this renderer can't render faithfully."""


def build(directory: Path) -> list[Doc]:
    """Render `directory`'s kustomization the way `kustomize build` would."""
    docs = _render(directory)
    _hash_generated(docs)
    return docs


def load_yaml_docs(path: Path) -> list[Doc]:
    """Every non-empty YAML document in a file."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _render(directory: Path) -> list[Doc]:
    spec = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(spec) - SUPPORTED
    if unknown:
        raise KustomizeError(f"{directory}: unsupported kustomization fields {sorted(unknown)}")
    docs: list[Doc] = []
    for entry in spec.get("resources", []):
        target = (directory / entry).resolve()
        if target.is_dir():
            docs += _render(target)
        else:
            docs += load_yaml_docs(target)
    for generator in spec.get("configMapGenerator", []):
        _generate_config_map(docs, generator)
    for patch in spec.get("patches", []):
        _apply_patch(docs, directory, patch)
    for doc in docs:
        if "namespace" in spec and doc["kind"] not in CLUSTER_SCOPED:
            doc["metadata"]["namespace"] = spec["namespace"]
        for label in spec.get("labels", []):
            if label.get("includeSelectors") or label.get("includeTemplates"):
                raise KustomizeError("labels with selectors/templates are not rendered here")
            doc["metadata"].setdefault("labels", {}).update(label["pairs"])
        for image in spec.get("images", []):
            _set_image(doc, image)
        for replicas in spec.get("replicas", []):
            if doc["metadata"]["name"] == replicas["name"] and "replicas" in doc.get("spec", {}):
                doc["spec"]["replicas"] = replicas["count"]
    _check_unique(docs)
    return docs


def _literals(generator: Doc) -> dict[str, str]:
    if set(generator) - {"name", "behavior", "literals"}:
        raise KustomizeError(f"configMapGenerator {generator['name']}: only literals supported")
    data = {}
    for literal in generator.get("literals", []):
        key, _, value = literal.partition("=")
        data[key] = value
    return data


def _generate_config_map(docs: list[Doc], generator: Doc) -> None:
    behavior = generator.get("behavior", "create")
    existing = [d for d in docs if d["kind"] == "ConfigMap"
                and d["metadata"]["name"] == generator["name"]]
    if behavior == "create":
        if existing:
            raise KustomizeError(f"ConfigMap {generator['name']} generated twice")
        docs.append({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": generator["name"], "annotations": {GENERATED: "1"}},
                     "data": _literals(generator)})
    elif behavior in ("merge", "replace"):
        if not existing:
            raise KustomizeError(f"ConfigMap {generator['name']} to {behavior} does not exist")
        target = existing[0]
        target["data"] = {**(target["data"] if behavior == "merge" else {}),
                          **_literals(generator)}
    else:
        raise KustomizeError(f"unknown generator behavior {behavior}")


def _hash_generated(docs: list[Doc]) -> None:
    """`name-<hash>` for generated maps (a content change rolls the pods), references too."""
    renames: dict[str, str] = {}
    for doc in docs:
        annotations = doc["metadata"].get("annotations", {})
        if annotations.pop(GENERATED, None):
            if not annotations:
                del doc["metadata"]["annotations"]
            digest = hashlib.sha256(json.dumps(doc["data"], sort_keys=True).encode()).hexdigest()
            renames[doc["metadata"]["name"]] = f"{doc['metadata']['name']}-{digest[:10]}"
            doc["metadata"]["name"] = renames[doc["metadata"]["name"]]
    for doc in docs:
        for pod in _pod_specs(doc):
            for container in pod.get("containers", []) + pod.get("initContainers", []):
                for source in container.get("envFrom", []):
                    ref = source.get("configMapRef")
                    if ref and ref["name"] in renames:
                        ref["name"] = renames[ref["name"]]
            for volume in pod.get("volumes", []):
                if "configMap" in volume and volume["configMap"]["name"] in renames:
                    volume["configMap"]["name"] = renames[volume["configMap"]["name"]]


def _pod_specs(doc: Doc) -> list[Doc]:
    if doc["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
        return [doc["spec"]["template"]["spec"]]
    return []


def _set_image(doc: Doc, image: Doc) -> None:
    for pod in _pod_specs(doc):
        for container in pod.get("containers", []) + pod.get("initContainers", []):
            name = container["image"].split("@")[0].rsplit(":", 1)[0] \
                if ":" in container["image"].rsplit("/", 1)[-1] else container["image"]
            if name == image["name"]:
                tag = image.get("newTag")
                container["image"] = image.get("newName", name) + (f":{tag}" if tag else "")


def _apply_patch(docs: list[Doc], directory: Path, patch: Doc) -> None:
    if "path" in patch:
        for patch_doc in load_yaml_docs(directory / patch["path"]):
            target = _find(docs, patch_doc["kind"], patch_doc["metadata"]["name"])
            if patch_doc.get("$patch") == "delete":
                docs.remove(target)
                continue
            _strategic_merge(target, patch_doc)
        return
    target_spec = patch["target"]
    operations = yaml.safe_load(patch["patch"])
    if not isinstance(operations, list):
        raise KustomizeError("inline patches must be JSON6902 operation lists here")
    target = _find(docs, target_spec["kind"], target_spec["name"])
    for operation in operations:
        _json6902(target, operation)


def _find(docs: list[Doc], kind: str, name: str) -> Doc:
    matches = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    if len(matches) != 1:
        raise KustomizeError(f"patch target {kind}/{name} matched {len(matches)} resources")
    return matches[0]


def _strategic_merge(target: Any, patch: Any) -> Any:
    """Maps merge key by key; lists of named items merge by name; other lists replace."""
    if isinstance(target, dict) and isinstance(patch, dict):
        for key, value in patch.items():
            target[key] = _strategic_merge(target[key], value) if key in target \
                else copy.deepcopy(value)
        return target
    if isinstance(target, list) and isinstance(patch, list) and patch \
            and all(isinstance(i, dict) and "name" in i for i in target + patch):
        by_name = {item["name"]: item for item in target}
        for item in patch:
            if item["name"] in by_name:
                _strategic_merge(by_name[item["name"]], item)
            else:
                target.append(copy.deepcopy(item))
        return target
    return copy.deepcopy(patch)


def _json6902(target: Doc, operation: Doc) -> None:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in operation["path"].split("/")[1:]]
    parent = target
    for part in parts[:-1]:
        parent = parent[int(part)] if isinstance(parent, list) else parent[part]
    last = parts[-1]
    op = operation["op"]
    if op in ("add", "replace"):
        if op == "replace" and (last not in parent if isinstance(parent, dict) else False):
            raise KustomizeError(f"replace of missing {operation['path']}")
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if op == "add":
                parent.insert(index, operation["value"])
            else:
                parent[index] = operation["value"]
        else:
            parent[last] = operation["value"]
    elif op == "remove":
        del parent[int(last) if isinstance(parent, list) else last]
    else:
        raise KustomizeError(f"JSON6902 op {op} not rendered here")


def _check_unique(docs: list[Doc]) -> None:
    seen = set()
    for doc in docs:
        key = (doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"])
        if key in seen:
            raise KustomizeError(f"duplicate resource {key}")
        seen.add(key)
