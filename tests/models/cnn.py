"""(d) CNN: conv2d with stride, padding, dilation and groups; batch_norm in
eval; relu; max_pool2d; adaptive_avg_pool2d; a linear head."""
import torch
from torch import nn


class CNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2, padding=2, dilation=2), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=1, groups=4), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
            nn.Conv2d(16, 32, (3, 1), stride=(1, 2), padding=(1, 0), bias=False), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def get_model(seed=0, batch=2, size=32):
    torch.manual_seed(seed)
    m = CNN()
    # non-trivial running statistics so eval-mode batch_norm is really tested
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    return m.eval(), (torch.randn(batch, 3, size, size),)
