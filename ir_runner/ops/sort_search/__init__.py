"""Sorting and searching: TopK, NonZero, Bucketize, SearchSorted, Unique."""
