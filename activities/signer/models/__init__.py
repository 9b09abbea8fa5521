"""The signer's tables in the operational store."""
