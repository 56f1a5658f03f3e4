"""Each downloaded page checked: signatures, near-duplicates, declared canonicals, and the items of
duplicate pages (docs/rules.md, docs/near_duplicates.md)."""
