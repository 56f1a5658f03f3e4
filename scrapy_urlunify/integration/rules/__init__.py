"""URL rules learned from duplicate pages during a crawl, and their probation (docs/learning.md)."""
