"""Output: rich tables for people, JSON for machines. Only this package formats units."""
