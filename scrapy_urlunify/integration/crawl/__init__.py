"""What one crawler's components share, built once per crawler (docs/architecture.md)."""
