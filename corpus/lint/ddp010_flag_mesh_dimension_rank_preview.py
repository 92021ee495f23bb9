"""An RL rollout worker on a (dp, tp) device mesh: the first rank of each tensor-parallel
group launches an inference server and exchanges its address over the data-parallel
group. Whether every member of that data-parallel group passes the tensor-parallel test
depends on how the mesh lays out its groups, which the code does not show: unproven."""
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh


class RolloutWorker:
    def __init__(self, tp_size):
        world_size = dist.get_world_size()
        self.device_mesh = init_device_mesh(
            "cuda", (world_size // tp_size, tp_size), mesh_dim_names=("dp", "tp")
        )
        if self.device_mesh["tp"].get_local_rank() == 0:
            self._share_server_address()  # expect-preview: DDP010

    def _share_server_address(self):
        address = [f"http://{dist.get_rank()}:30000"]
        everyone = [None] * self.device_mesh["dp"].size()
        dist.all_gather_object(everyone, address, group=self.device_mesh["dp"].get_group())
        self.server_urls = [url for urls in everyone for url in urls]
