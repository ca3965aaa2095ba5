"""Reading IR files: records, the hardened XML reader and the memory-mapped weights."""
