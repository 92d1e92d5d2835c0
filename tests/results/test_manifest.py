"""The run manifest's one reader (crsbench_lib.results.manifest)."""

from __future__ import annotations

import json

import pytest

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.io import MANIFEST_FILE
from crsbench_lib.results.manifest import MANIFEST_FORMAT, manifest_beside, manifest_text, read_manifest


def write(folder, body) -> None:
    (folder / MANIFEST_FILE).write_text(body if isinstance(body, str) else json.dumps(body))


def test_the_writer_s_text_reads_back(tmp_path):
    content = {"profile": "p", "config": {"datasets": [{"name": "derm", "kind": "phantom"}]}, "config_hash": "abc",
               "standard": {"path": "s.yaml"}, "cells": [{"key": "k", "cell": "c"}], "dataset_domains": {"derm": "d"}}
    write(tmp_path, manifest_text(content, "9.9"))
    manifest = read_manifest(tmp_path)
    assert manifest.body["format"] == MANIFEST_FORMAT and manifest.body["package_version"] == "9.9"
    assert (manifest.profile, manifest.config_hash, manifest.standard_path) == ("p", "abc", "s.yaml")
    assert manifest.cells[0]["key"] == "k" and manifest.dataset_domains == {"derm": "d"}
    assert manifest.simulated is True and manifest.config_source is None


def test_every_key_is_optional(tmp_path):
    write(tmp_path, {})
    manifest = read_manifest(tmp_path / MANIFEST_FILE)
    assert manifest.config is None and manifest.cells == () and manifest.simulated is None and manifest.profile == ""


@pytest.mark.parametrize(("body", "message"), [
    ("{not json", "unreadable run manifest"),
    ("[1]", "must be a JSON object"),
    ({"config": []}, "key 'config' must be an object"),
    ({"config": {"datasets": [1]}}, "key 'config.datasets' must be a list of objects"),
    ({"config": {"datasets": [{"name": "x"}]}}, "key 'config.datasets' has an entry without"),
    ({"cells": {}}, "key 'cells' must be a list of objects"),
    ({"standard": "s.yaml"}, "key 'standard' must be an object"),
    ({"dataset_domains": []}, "key 'dataset_domains' must be an object"),
])
def test_a_malformed_manifest_is_one_line_naming_the_file_and_key(tmp_path, body, message):
    write(tmp_path, body)
    with pytest.raises(SchemaError, match=message) as caught:
        read_manifest(tmp_path)
    assert str(caught.value).startswith(str(tmp_path / MANIFEST_FILE)) and "\n" not in str(caught.value)
    assert manifest_beside(tmp_path / "results.parquet") is None


def test_a_missing_manifest(tmp_path):
    with pytest.raises(SchemaError, match="no run manifest"):
        read_manifest(tmp_path)
    assert manifest_beside(tmp_path / "results.parquet") is None
