"""Checkpoints written from CPU copies of the state, so any process can read them."""
import torch


def save_cpu_checkpoint(model, epoch, path):
    net = model.module if hasattr(model, "module") else model
    weights = {name: tensor.detach().cpu() for name, tensor in net.state_dict().items()}
    torch.save({"model": weights, "epoch": epoch}, path)


def save_distilled(student, teacher_name, path):
    torch.save({"student": student.state_dict(), "teacher_name": teacher_name}, path)
