"""The operational store: engine, tables, migrations."""
