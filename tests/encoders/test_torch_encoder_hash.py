import torch

from crsbench_lib.encoders.torch_encoder import module_hash


def test_module_hash_covers_zero_dim_buffers():
    norm = torch.nn.BatchNorm2d(3)
    before = module_hash(norm)
    norm.num_batches_tracked += 1
    assert module_hash(norm) != before
