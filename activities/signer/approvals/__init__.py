"""The signer's approval step: hold, decide, release, veto, expire; notifications by e-mail."""
