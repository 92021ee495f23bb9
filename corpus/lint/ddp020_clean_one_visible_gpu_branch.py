"""An evaluation helper that places the model by what it sees: with one visible GPU the
plain `.cuda()` is that GPU (the spawner starts one process per visible GPU, so one
process); with several, each spawned process sets its own device and wraps the model."""
import torch


def distribute_model_to_cuda(model, args, cfg):
    if torch.cuda.device_count() == 1:
        model = model.cuda()
    elif args.distributed:
        torch.cuda.set_device(args.gpu)
        model.cuda(args.gpu)
        cfg["batch_size"] = max(cfg["batch_size"] // args.world_size, 1)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    return model


def main_worker(gpu, ngpus, args, cfg, build_model):
    args.gpu = gpu
    if args.distributed:
        torch.distributed.init_process_group(
            "nccl", init_method=args.dist_url, world_size=ngpus, rank=gpu
        )
    return distribute_model_to_cuda(build_model(), args, cfg)
