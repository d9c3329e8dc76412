"""torch.linalg's functions that bessemer has: vector_norm."""

from ._reduce_ops import vector_norm

__all__ = ["vector_norm"]
