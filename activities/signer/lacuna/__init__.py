"""The signer's Lacuna Signer methods: LacunaSigner (remote flows) and SignerFolder."""
