"""The transaction coordinator."""
