"""The dashboard's pages, one module per area."""
