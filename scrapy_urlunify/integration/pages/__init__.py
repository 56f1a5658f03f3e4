"""Each downloaded page checked: signatures, near-duplicates, declared canonicals, and the items of
duplicate pages (docs/near_duplicates.md)."""
