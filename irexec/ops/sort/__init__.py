"""Sorting and search (OpenVINO spec category `sort`): TopK, SearchSorted."""
