"""NVML's UUID prefix, put on in one place (gpuwhy.device.uuids), and the profile store's form."""

from __future__ import annotations

import pytest

from gpuwhy.device.uuids import with_uuid_prefix
from gpuwhy.profiles import normalize_uuid

HEX = "8932f937-d72c-4106-c12f-20bd9faed9f6"


@pytest.mark.parametrize("uuid, mig, want", [
    (HEX, False, f"GPU-{HEX}"),
    (HEX, True, f"MIG-{HEX}"),
    (f"GPU-{HEX}", True, f"GPU-{HEX}"),  # a prefix already there is kept, whichever
    (f"MIG-{HEX}", False, f"MIG-{HEX}"),
    (f"gpu-{HEX}", False, f"gpu-{HEX}"),  # in any case
    ("unknown-3", False, "GPU-unknown-3"),
])
def test_with_uuid_prefix(uuid, mig, want):
    assert with_uuid_prefix(uuid, mig=mig) == want


def test_the_profile_store_writes_nvml_form_in_lower_case():
    assert normalize_uuid(f" GPU-{HEX.upper()} ") == normalize_uuid(HEX) == normalize_uuid(f"gpu-{HEX}") == f"GPU-{HEX}"
    assert normalize_uuid(f"MIG-{HEX.upper()}") == f"MIG-{HEX}"
