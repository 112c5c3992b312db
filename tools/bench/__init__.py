"""irexec's benchmarks, one module a suite; ``python -m tools.bench SUITE [options]`` runs one
(``tools/bench/__main__.py`` lists them). Results and how to read them: docs/performance.md."""
