"""Signing, verification and artifact encryption for the signer domain (no I/O beyond files)."""
