"""irexec's own ops (version family `irexec`), such as DirectML's reverse-subsequences."""
