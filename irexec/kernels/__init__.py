"""numpy kernels shared by several ops."""
