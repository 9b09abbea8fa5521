"""Hostile PDF shapes fail as document.corrupt (the file is at fault), never signing.failed."""

from __future__ import annotations

import pytest

from activities.signer.crypto import pades, samples
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.verify import verify_pades


def test_a_3000_deep_page_tree_is_a_corrupt_document(signer):
    data = samples.make_deep_pdf(3_000)
    with pytest.raises(SignerCryptoError) as err:
        pades.sign_pades(data, signer)
    assert err.value.code is ErrorCode.DOCUMENT_CORRUPT, err.value


def test_a_shallow_tree_of_the_same_shape_still_signs(signer):
    signed = pades.sign_pades(samples.make_deep_pdf(20), signer)
    assert verify_pades(signed, trust_roots=[]).code is not ErrorCode.DOCUMENT_CORRUPT
