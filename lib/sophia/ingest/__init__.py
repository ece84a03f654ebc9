"""Conversation ingest: LoCoMo samples and JSONL turn logs -> kept turn files + indexed turns."""
