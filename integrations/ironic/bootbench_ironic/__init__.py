"""bootbench steps for the Ironic Python Agent (see manager.py)."""
