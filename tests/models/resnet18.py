"""torchvision resnet18(weights=None) at 1x3x224x224."""
import torch


def get_model(seed=0, batch=1, size=224):
    import torchvision
    torch.manual_seed(seed)
    m = torchvision.models.resnet18(weights=None).eval()
    return m, (torch.randn(batch, 3, size, size),)
