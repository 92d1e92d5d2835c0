"""Canonical JSON and file digests."""

import hashlib
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.hashing import canonical_json, file_sha256, sha256_of
from crsbench_lib.registry.chain import stored_registry_json

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


def test_canonical_json_sorts_keys_without_whitespace():
    assert canonical_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'


@given(st.dictionaries(st.text(), json_values))
def test_key_order_does_not_change_the_hash(mapping):
    reordered = dict(reversed(list(mapping.items())))
    assert canonical_json(reordered) == canonical_json(mapping)
    assert sha256_of(reordered) == sha256_of(mapping)


def test_canonical_json_refuses_nan():
    with pytest.raises(ValueError):
        canonical_json({"x": math.nan})


def test_registry_form_differs_on_purpose():
    # The registry's stored hashes keep non-ASCII text and NaN as they are.
    assert stored_registry_json({"é": math.nan}) == '{"é":NaN}'
    assert canonical_json({"é": 1}) == '{"\\u00e9":1}'


def test_file_sha256_matches_hashlib(tmp_path):
    data = bytes(range(256)) * 5000  # several read blocks
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
