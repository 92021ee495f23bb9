import torch


@torch.no_grad()
def plot_forecast(model, loader, device, step):
    """Forecast a few held-out series and log the error."""
    model.eval()
    errors = []
    for history, future in loader:
        prediction = model(history.to(device))
        errors.append((prediction - future.to(device)).pow(2).mean().sqrt().item())
    print(f"step {step}: sample RMSE {sum(errors) / len(errors):.4f}")
