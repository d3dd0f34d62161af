"""(e) LeNet-style MNIST net."""
import torch
from torch import nn
import torch.nn.functional as F


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5, padding=2)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.f1 = nn.Linear(16 * 5 * 5, 120)
        self.f2 = nn.Linear(120, 84)
        self.f3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.f1(x))
        x = F.relu(self.f2(x))
        return F.log_softmax(self.f3(x), dim=1)


def get_model(seed=0, batch=4):
    torch.manual_seed(seed)
    return LeNet().eval(), (torch.randn(batch, 1, 28, 28),)
