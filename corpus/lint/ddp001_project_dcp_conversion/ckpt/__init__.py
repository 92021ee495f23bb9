"""Reading and writing sharded (torch.distributed.checkpoint) checkpoints."""
