"""bessemer.nn.utils: gradient clipping (torch.nn.utils's names and semantics)."""

from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]
